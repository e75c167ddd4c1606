// Linux's epoll and eventfd, which Swift's Glibc module does not bring: the HTTP
// server's event loop (Sources/LedgerHTTP) uses them. libc only, nothing to link.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

// accept4 is declared only under _GNU_SOURCE; the function is always in glibc.
extern int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags);
