#!/usr/bin/env bash
# The browser tests drive Debian's Chromium (Playwright's own download is not reachable offline).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ -n "${CHROMIUM_PATH:-}" ] && [ -x "${CHROMIUM_PATH}" ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "[ensure-chromium] installing Debian's chromium with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
echo "[ensure-chromium] /usr/bin/chromium is missing. Install it (Debian/Ubuntu: sudo apt-get install -y chromium)" >&2
echo "                  or point CHROMIUM_PATH at a Chromium binary." >&2
exit 1
