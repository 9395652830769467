/* A file in memory for the fuzz targets: the library reads paths, so each
 * input is written to a memfd (or, where that is missing, a file in /dev/shm
 * or /tmp) and read back through /proc/self/fd. One file per slot, reused
 * from input to input: the targets run millions of times. */
#ifndef NMT_FUZZ_FILE_H
#define NMT_FUZZ_FILE_H

#include <stddef.h>

/* Replaces the contents of file `slot` (0..3) with data[0..size) and returns
 * a path that reads them, valid until the next call for that slot. Aborts
 * when no file can be made: a fuzz run without its file would test nothing. */
const char *fuzz_file(int slot, const void *data, size_t size);

#endif
