#!/usr/bin/env bash
# Installs the workspace's dependencies (arguments go to `pnpm install`, e.g. --frozen-lockfile).
#
# better-sqlite3 and hnswlib-node compile with node-gyp when no prebuilt binary can be fetched, and
# node-gyp then downloads Node's headers, which fails offline. When the running Node ships its
# headers (Debian/NodeSource packages, official tarballs: <prefix>/include/node), point node-gyp at
# them for this install only. It is set here rather than in the repository's .npmrc, where every
# npm command warned `Unknown user config "nodedir"`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${npm_config_nodedir:-}" ]; then
  prefix="$(dirname "$(dirname "$(command -v node)")")"
  if [ -f "${prefix}/include/node/node.h" ]; then export npm_config_nodedir="${prefix}"; fi
fi
exec pnpm install "$@"
