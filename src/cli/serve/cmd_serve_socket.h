/* nmt serve's listening socket: --host resolved (a numeric address or a
 * name such as localhost) and bound to --port before the models load, so
 * that a host that does not resolve or an address that cannot be had (in
 * use, not this machine's) is refused at once, not after a long load. The
 * socket listens only once the server is ready to answer (cmd_serve_http.c):
 * until then a connection is refused rather than left waiting. */
#ifndef NMT_CLI_SERVE_SOCKET_H
#define NMT_CLI_SERVE_SOCKET_H

#include <netinet/in.h>

typedef struct serve_socket {
    int fd;                          /* bound, not yet listening */
    char url_host[INET6_ADDRSTRLEN + 2]; /* the address bound, numeric ("[::1]" for IPv6) */
    int port;                        /* the port bound (the one picked for port 0) */
} serve_socket;

/* Resolves host and binds the first of its addresses that can be bound
 * (IPv6 addresses only for IPv6, as "::" has always meant). 0; 2 when the
 * host does not resolve (a usage error, the option named); 1 when none of
 * its addresses could be bound. Says why on stderr. */
int serve_socket_bind(serve_socket *out, const char *host, int port);

#endif
