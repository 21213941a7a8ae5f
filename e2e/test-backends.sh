#!/usr/bin/env bash
# The browser suite once per backend (issue 14: every feature works on both): SQLite with every
# spec, then Postgres + Redis (E2E_BACKEND=postgres, the specs playwright.config.ts lists). The
# second runs even when the first fails, so scripts/test.sh's summary counts both runs' "N passed" /
# "N failed" lines; the exit status is non-zero when either failed. Arguments go to both runs.
set -uo pipefail
cd "$(dirname "$0")"
status=0
E2E_BACKEND=sqlite playwright test "$@" || status=$?
E2E_BACKEND=postgres playwright test "$@" || status=$?
exit "$status"
