/* Files written whole or not at all (nmt/atomic_file.h): a temporary file
 * beside the target, renamed over it once complete. */
#include "nmt/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nmt/error.h"

static void release(nmt_atomic_file *a)
{
    free(a->path);
    free(a->tmp);
    memset(a, 0, sizeof *a);
}

int nmt_atomic_open(nmt_atomic_file *a, const char *path, const char *name, int keep_mode)
{
    memset(a, 0, sizeof *a);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t cap = strlen(path) + 48;
    a->path = strdup(path);
    a->tmp = malloc(cap);
    a->name = name ? name : a->path;
    if (!a->path || !a->tmp) {
        release(a);
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", name ? name : path);
    }
    /* ".NAME.tmp.PID" beside the target: the rename stays in one file system */
    snprintf(a->tmp, cap, "%.*s.%s.tmp.%ld", (int)(base - path), path, base, (long)getpid());
    /* O_EXCL: never through a link someone left at that name */
    int fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST && unlink(a->tmp) == 0) /* left by a killed process */
        fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    struct stat st;
    if (fd >= 0 && keep_mode && stat(path, &st) == 0 && S_ISREG(st.st_mode))
        (void)fchmod(fd, st.st_mode & 07777);
    if (fd >= 0 && !(a->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(a->tmp);
        errno = e;
    }
    if (!a->f) {
        int rc = nmt_set_error(NMT_ERR_IO, "%s: cannot write: %s", a->name, strerror(errno));
        release(a);
        return rc;
    }
    return NMT_OK;
}

/* fsync of the folder makes the rename itself durable. Some file systems
 * refuse fsync on a folder (EINVAL); the rename has happened then anyway. */
static int sync_folder(const char *file)
{
    const char *slash = strrchr(file, '/');
    size_t len = slash ? (slash == file ? 1 : (size_t)(slash - file)) : 1;
    char *dir = malloc(len + 1);
    if (!dir)
        return -1;
    snprintf(dir, len + 1, "%.*s", (int)len, slash ? file : ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    if (rc && (errno == EINVAL || errno == ENOTSUP))
        rc = 0;
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

int nmt_atomic_commit(nmt_atomic_file *a)
{
    if (!a->f)
        return NMT_OK;
    FILE *f = a->f;
    a->f = NULL;
    /* the reason, when the failing call is this one (an earlier failed
     * write left only the error flag) */
    int bad = ferror(f), e = 0;
    if (!bad && fflush(f)) {
        bad = 1;
        e = errno;
    }
    if (!bad && fsync(fileno(f))) {
        bad = 1;
        e = errno;
    }
    if (fclose(f) && !bad) {
        bad = 1;
        e = errno;
    }
    int rc = NMT_OK;
    if (!bad && rename(a->tmp, a->path)) {
        rc = nmt_set_error(NMT_ERR_IO, "%s: cannot write: %s", a->name, strerror(errno));
        bad = 2;
    }
    if (bad == 1)
        rc = e ? nmt_set_error(NMT_ERR_IO, "%s: write failed: %s", a->name, strerror(e))
               : nmt_set_error(NMT_ERR_IO, "%s: write failed", a->name);
    if (bad)
        unlink(a->tmp);
    else if (sync_folder(a->path))
        rc = nmt_set_error(NMT_ERR_IO, "%s: cannot sync its folder: %s", a->name,
                           strerror(errno));
    release(a);
    return rc;
}

void nmt_atomic_abort(nmt_atomic_file *a)
{
    if (!a->f)
        return;
    fclose(a->f);
    unlink(a->tmp);
    release(a);
}
