/* tgkill SIGNAL PID TID...: sends SIGNAL to each thread TID of process PID,
 * as the kernel would deliver a process-wide signal to that thread.
 *
 * The command-line tests use it to make a signal land on a chosen thread
 * (OpenBLAS's, which starts before main and so never inherits a signal
 * mask set there; libmicrohttpd's; a worker's): neither kill(1) nor
 * Python's os.pthread_kill can aim at a thread of another process. A
 * thread that has already exited (ESRCH) is passed over: a test sends to
 * every thread of a process that is stopping. Exit 0, or 2 on bad
 * arguments or another error. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int number(const char *s, long *out)
{
    char *end;
    errno = 0;
    *out = strtol(s, &end, 10);
    return errno || end == s || *end || *out <= 0;
}

int main(int argc, char **argv)
{
    long sig, pid, tid;
    if (argc < 4 || number(argv[1], &sig) || number(argv[2], &pid)) {
        fprintf(stderr, "usage: tgkill SIGNAL PID TID...\n");
        return 2;
    }
    for (int k = 3; k < argc; k++) {
        if (number(argv[k], &tid)) {
            fprintf(stderr, "tgkill: '%s' is not a thread id\n", argv[k]);
            return 2;
        }
        if (syscall(SYS_tgkill, (pid_t)pid, (pid_t)tid, (int)sig) && errno != ESRCH) {
            fprintf(stderr, "tgkill %ld %ld %ld: %s\n", sig, pid, tid, strerror(errno));
            return 2;
        }
    }
    return 0;
}
