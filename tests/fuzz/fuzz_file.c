/* Files in memory for the fuzz targets (see fuzz_file.h). */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

enum { N_SLOTS = 4 };

static int fds[N_SLOTS] = {-1, -1, -1, -1};
static char paths[N_SLOTS][64];

static int make_file(int slot)
{
    int fd;
#ifdef MFD_CLOEXEC
    fd = memfd_create("nmt-fuzz", MFD_CLOEXEC);
    if (fd >= 0)
        return fd;
#endif
    /* no memfd: an unlinked temporary file, preferably in memory */
    const char *dirs[] = {"/dev/shm", "/tmp"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char tmpl[64];
        snprintf(tmpl, sizeof tmpl, "%s/nmt-fuzz-%d-XXXXXX", dirs[i], slot);
        fd = mkstemp(tmpl);
        if (fd >= 0) {
            unlink(tmpl);
            return fd;
        }
    }
    return -1;
}

const char *fuzz_file(int slot, const void *data, size_t size)
{
    if (slot < 0 || slot >= N_SLOTS)
        abort();
    if (fds[slot] < 0) {
        fds[slot] = make_file(slot);
        if (fds[slot] < 0) {
            perror("fuzz_file: cannot make a temporary file");
            abort();
        }
        snprintf(paths[slot], sizeof paths[slot], "/proc/self/fd/%d", fds[slot]);
    }
    int fd = fds[slot];
    const char *p = data;
    if (ftruncate(fd, 0))
        abort();
    for (size_t done = 0; done < size;) {
        ssize_t k = pwrite(fd, p + done, size - done, (off_t)done);
        if (k <= 0) {
            perror("fuzz_file: write");
            abort();
        }
        done += (size_t)k;
    }
    return paths[slot];
}
