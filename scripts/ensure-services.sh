#!/usr/bin/env bash
# The Postgres and Redis tests (issue 14) start throwaway instances of Debian's postgresql-15 and
# redis-server (packages/test-servers). Like scripts/ensure-chromium.sh: install them with apt-get
# when root, otherwise say what is missing and fail, so those tests are never skipped silently.
# POSTGRES_BIN_DIR / REDIS_SERVER_PATH point at binaries installed elsewhere.
set -euo pipefail
pg_bin="${POSTGRES_BIN_DIR:-/usr/lib/postgresql/15/bin}"
redis_bin="${REDIS_SERVER_PATH:-$(command -v redis-server || echo /usr/bin/redis-server)}"

find_missing() {
  missing=()
  if [ ! -x "${pg_bin}/initdb" ] || [ ! -x "${pg_bin}/postgres" ]; then missing+=(postgresql-15); fi
  if [ ! -x "${redis_bin}" ]; then missing+=(redis-server); fi
}
find_missing
if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  # Several packages' tests call this at once under turbo: one install at a time (dpkg has one
  # lock), and what another call installed meanwhile is not installed again.
  if command -v flock >/dev/null 2>&1; then
    exec 9>"${TMPDIR:-/tmp}/engram-ensure-services.lock"
    flock 9
    redis_bin="${REDIS_SERVER_PATH:-$(command -v redis-server || echo /usr/bin/redis-server)}"
    find_missing
    if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi
  fi
  echo "[ensure-services] installing ${missing[*]} with apt-get"
  # policy-rc.d 101: the packages' own system services are not started (the tests start their
  # own instances on free ports); the package's default cluster is not needed either.
  policy=/usr/sbin/policy-rc.d
  had_policy=0
  if [ -e "$policy" ]; then had_policy=1; else printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"; fi
  trap '[ "$had_policy" = 1 ] || rm -f "$policy"' EXIT
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi
echo "[ensure-services] missing: ${missing[*]}. The Postgres/Redis tests need them." >&2
echo "                  Debian/Ubuntu: sudo apt-get install -y postgresql-15 redis-server" >&2
echo "                  or point POSTGRES_BIN_DIR (initdb, postgres) and REDIS_SERVER_PATH at installed binaries." >&2
exit 1
