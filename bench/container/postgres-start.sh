#!/bin/sh
# A first start creates the cluster (UTF-8, as the official image), its user (password auth over TCP) and database; every start runs the server.
set -eu
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is not set}"
user="${POSTGRES_USER:-postgres}" db="${POSTGRES_DB:-$user}" data=/var/lib/postgresql/data
bin=/usr/lib/postgresql/15/bin
install -d -o postgres -m 700 "$data" /run/postgresql
chown postgres /run/postgresql
if [ ! -s "$data/PG_VERSION" ]; then
    pw=$(mktemp) && printf '%s\n' "$POSTGRES_PASSWORD" > "$pw" && chown postgres "$pw"
    runuser -u postgres -- "$bin/initdb" -D "$data" -U "$user" --encoding=UTF8 --locale=C.UTF-8 --pwfile="$pw" --auth-local=trust \
        --auth-host=scram-sha-256 >/dev/null
    rm -f "$pw"
    echo "host all all all scram-sha-256" >> "$data/pg_hba.conf"
    runuser -u postgres -- "$bin/pg_ctl" -D "$data" -w -o "-c listen_addresses=''" start >/dev/null
    runuser -u postgres -- "$bin/createdb" -U "$user" -O "$user" "$db"
    runuser -u postgres -- "$bin/pg_ctl" -D "$data" -w stop >/dev/null
fi
exec runuser -u postgres -- "$bin/postgres" -D "$data" -c listen_addresses='*'
