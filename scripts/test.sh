#!/usr/bin/env bash
# `pnpm test`: lint, type checks, and every package's tests (unit, API, browser), then one closing
# line for the whole suite: "tests: N passed, M failed". The per-package figures come from
# vitest's "Tests  N passed | M failed (T)" and Playwright's "N passed" / "N failed" lines.
# Arguments go to turbo (e.g. --filter=@engram/core). The API suite is two turbo tasks, `test` (its
# sqlite project) and `test:on-postgres` (the same files on Postgres), so the two CPUs turbo is
# given both work until the end: as one task, vitest's single worker on a 2-CPU machine left one
# idle for its last minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

status=0
# --continue: one failing package must not cancel the others, or the summary would undercount.
{ pnpm exec biome check . && node tools/check-imports.mjs && pnpm exec turbo run typecheck test test:on-postgres --concurrency=2 --continue "$@"; } 2>&1 | tee "$log" || status=$?

read -r passed failed < <(sed -e 's/\x1b\[[0-9;]*m//g' "$log" | awk '
  /^[^ ]+:test(:on-postgres)?: +Tests / || /^@engram\/e2e:test: +[0-9]+ (passed|failed)/ {
    for (i = 2; i <= NF; i++) {
      if ($i ~ /^passed/ && $(i-1) ~ /^[0-9]+$/) p += $(i-1)
      if ($i ~ /^failed/ && $(i-1) ~ /^[0-9]+$/) f += $(i-1)
    }
  }
  END { print p + 0, f + 0 }')
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  # Lint, a type check or a build failed, or tests did not get to run: say so on the same line.
  echo "tests: ${passed} passed, ${failed} failed (pnpm test failed outside the tests: see above)"
else
  echo "tests: ${passed} passed, ${failed} failed"
fi
exit "$status"
