#include "nmt/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char message[1024];

int nmt_set_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return code;
}

const char *nmt_error_message(void)
{
    return message;
}

void nmt_clear_error(void)
{
    message[0] = '\0';
}
