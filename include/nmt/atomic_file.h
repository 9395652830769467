/* A file written whole or not at all. It is written into a temporary file
 * beside it, ".NAME.tmp.PID" (in its folder, so that the rename stays in one
 * file system and is atomic), which is flushed, synced, closed and renamed
 * over it at the end; then the folder is synced, so that the rename
 * survives a crash. A failure anywhere removes the temporary file and leaves
 * the old file byte for byte. Model files (nmt_st_write), a resumed run's
 * log.tsv cut back (nmt_runlog_open) and the command line's outputs are
 * written so (docs/DESIGN.md, "Files on disk"). */
#ifndef NMT_ATOMIC_FILE_H
#define NMT_ATOMIC_FILE_H

#include <stdio.h>

typedef struct nmt_atomic_file {
    FILE *f;          /* the temporary file, open for writing (NULL: none) */
    char *path;       /* the file it replaces */
    char *tmp;        /* the temporary file's name */
    const char *name; /* the file as messages name it (not owned) */
} nmt_atomic_file;

/* Makes the temporary file for path and opens it as a->f. One of that name
 * that a killed process left is replaced. With keep_mode an existing file's
 * permissions pass to the new one (else it has 0666 less the umask). name:
 * the file as messages name it (NULL: path; a given name must outlive a).
 * NMT_OK, or
 * NMT_ERR_IO "NAME: cannot write: REASON" (NMT_ERR_NOMEM) with a left
 * empty. */
int nmt_atomic_open(nmt_atomic_file *a, const char *path, const char *name, int keep_mode);

/* Ends a complete file: flushes, syncs and closes the temporary file,
 * renames it over path and syncs the folder. NMT_OK, or NMT_ERR_IO: "NAME:
 * write failed[: REASON]" when a write (a->f's error flag), the flush, the
 * sync or the close failed, "NAME: cannot write: REASON" when the rename
 * did (the temporary file removed and the old file left in both cases), or
 * "NAME: cannot sync its folder: REASON" (the file is replaced, but a crash
 * may undo it). a is emptied either way; nothing to end (a->f NULL) is
 * NMT_OK. */
int nmt_atomic_commit(nmt_atomic_file *a);

/* Drops an incomplete file: closes and removes the temporary file, so that
 * an old file keeps its bytes and no new one appears. Nothing to drop
 * (a->f NULL) does nothing. */
void nmt_atomic_abort(nmt_atomic_file *a);

#endif
