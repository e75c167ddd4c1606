// libpq's client API. Debian's libpq-dev installs it under /usr/include/postgresql
// (pkg-config libpq adds that folder; the second spelling needs no flag).
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>
#endif
