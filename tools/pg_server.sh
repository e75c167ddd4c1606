# Sourced by tools/pg_test.sh and tools/pg_bench.sh: a throwaway PostgreSQL 15 server.
# pg_start: initdb in a temporary folder as an unprivileged user (`postgres` when run
# as root), listening on 127.0.0.1 only, on a free port, trust authentication (the
# server is private to this run and gone at the end); fsync and synchronous_commit on.
# Sets PG_TMP, PG_PORT, PG_URL (postgres://postgres@127.0.0.1:PORT/postgres) and writes
# $PG_TMP/restart.sh (used by the server-restart test). pg_stop stops it and removes it.

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

pg_ensure_installed() {
    if [ -x "$PG_BIN/initdb" ] && [ -f /usr/include/postgresql/libpq-fe.h ]; then return 0; fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql-15 libpq-dev >/dev/null
    else
        echo "pg: needs postgresql-15 and libpq-dev (apt-get install -y postgresql-15 libpq-dev)" >&2
        return 1
    fi
}

# Runs a command as the server's unprivileged user.
pg_as_user() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_start() {
    pg_ensure_installed
    PG_TMP=$(mktemp -d /tmp/healthledger-pg.XXXXXX)
    chmod 700 "$PG_TMP"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$PG_TMP"; fi
    PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    pg_as_user "$PG_BIN/initdb" -D "$PG_TMP/data" -U postgres -A trust -E UTF8 --no-locale >"$PG_TMP/initdb.log" 2>&1 \
        || { cat "$PG_TMP/initdb.log" >&2; return 1; }
    cat >"$PG_TMP/restart.sh" <<RESTART
#!/usr/bin/env bash
# Restarts the throwaway server (fast shutdown: sessions are cut, as in a failover).
set -e
if [ "\$(id -u)" = 0 ]; then run="runuser -u postgres --"; else run=""; fi
\$run "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/server.log" -w -m fast restart >/dev/null
RESTART
    chmod 755 "$PG_TMP/restart.sh"
    pg_as_user "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_TMP -c fsync=on -c synchronous_commit=on -c max_connections=200" \
        start >/dev/null || { cat "$PG_TMP/server.log" >&2; return 1; }
    PG_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
    echo "pg: PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') at $PG_URL (data in $PG_TMP)"
}

pg_stop() {
    if [ -n "${PG_TMP:-}" ] && [ -d "$PG_TMP/data" ]; then
        pg_as_user "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -w -m fast stop >/dev/null 2>&1 || true
        rm -rf "$PG_TMP"
    fi
}
