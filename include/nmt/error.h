/* Error codes and messages of libnmt.
 *
 * Every library call that can fail returns an int: NMT_OK (0) on success or
 * one of the negative codes below. The human-readable reason (naming the file
 * and line where that applies) is kept per thread and read with
 * nmt_error_message(). The library never prints and never exits. */
#ifndef NMT_ERROR_H
#define NMT_ERROR_H

enum {
    NMT_OK = 0,
    NMT_ERR_IO = -1,        /* a file could not be opened, read or written */
    NMT_ERR_FORMAT = -2,    /* input is malformed: bad gzip, UTF-8, model file */
    NMT_ERR_NOMEM = -3,     /* an allocation failed or would be absurd */
    NMT_ERR_ARG = -4,       /* a bad argument or setting */
    NMT_ERR_NUMERIC = -5,   /* NaN or Inf appeared */
    NMT_ERR_INTERRUPTED = -6, /* stopped by a signal; state was saved */
};

/* Records a message for the calling thread and returns `code`, so that
 * `return nmt_set_error(NMT_ERR_IO, "%s: %s", path, strerror(errno));` works. */
int nmt_set_error(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The message of the last error set on this thread ("" if none). */
const char *nmt_error_message(void);

/* Clears the message of this thread. */
void nmt_clear_error(void);

#endif
