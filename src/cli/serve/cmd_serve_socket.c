/* nmt serve's listening socket (cmd_serve_socket.h). */
#define _GNU_SOURCE /* SOCK_CLOEXEC, SOCK_NONBLOCK */
#include "serve/cmd_serve_socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli_opts.h"

/* A socket bound to address a (its port set to port), or -1 with errno. */
static int bind_one(const struct addrinfo *a, int port)
{
    struct sockaddr_storage addr;
    memcpy(&addr, a->ai_addr, a->ai_addrlen);
    if (a->ai_family == AF_INET)
        ((struct sockaddr_in *)&addr)->sin_port = htons((unsigned short)port);
    else
        ((struct sockaddr_in6 *)&addr)->sin6_port = htons((unsigned short)port);
    /* non-blocking: libmicrohttpd's thread accepts from it without waiting */
    int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    int on = 1;
    /* a restart binds the port again while old connections linger in
     * TIME_WAIT; an IPv6 address is that address only (libmicrohttpd's
     * own choice without MHD_USE_DUAL_STACK, which "::" has always had) */
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) ||
        (a->ai_family == AF_INET6 &&
         setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on)) ||
        bind(fd, (const struct sockaddr *)&addr, a->ai_addrlen)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* The numeric address and port fd is bound to, for the "listening on"
 * URL. */
static int describe(int fd, serve_socket *out)
{
    struct sockaddr_storage addr;
    socklen_t len = sizeof addr;
    char text[INET6_ADDRSTRLEN];
    if (getsockname(fd, (struct sockaddr *)&addr, &len))
        return -1;
    if (addr.ss_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&addr;
        if (!inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text))
            return -1;
        snprintf(out->url_host, sizeof out->url_host, "[%s]", text);
        out->port = ntohs(v6->sin6_port);
    } else {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)&addr;
        if (!inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text))
            return -1;
        snprintf(out->url_host, sizeof out->url_host, "%s", text);
        out->port = ntohs(v4->sin_port);
    }
    return 0;
}

int serve_socket_bind(serve_socket *out, const char *host, int port)
{
    out->fd = -1;
    struct addrinfo hints, *list;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, NULL, &hints, &list);
    if (rc) {
        cli_error("--host: '%s' does not resolve: %s", host,
                  rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        return 2;
    }
    /* the first address that can be bound, in getaddrinfo's order: a name
     * may have an IPv6 address on a machine without IPv6 */
    int err = 0;
    for (const struct addrinfo *a = list; a && out->fd < 0; a = a->ai_next) {
        if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
            continue;
        if ((out->fd = bind_one(a, port)) < 0)
            err = errno;
        else if (describe(out->fd, out)) {
            err = errno;
            close(out->fd);
            out->fd = -1;
        }
    }
    freeaddrinfo(list);
    if (out->fd < 0) {
        cli_error("cannot listen on %s port %d: %s", host, port,
                  err ? strerror(err) : "no IPv4 or IPv6 address");
        return 1;
    }
    return 0;
}
