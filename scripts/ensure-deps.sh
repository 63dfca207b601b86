#!/usr/bin/env bash
# Installs what svc needs to build and test on a machine that has only node/npm:
# Bun (from the npm registry), the locked dependencies, and Debian's chromium for browser steps and UI tests.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v bun >/dev/null 2>&1; then
  echo "installing bun from the npm registry" >&2
  npm install -g bun >&2
fi
if [ ! -d node_modules ] || [ "${CI:-}" = "true" ]; then
  bun install --frozen-lockfile >&2
fi
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium (Debian package) for browser steps" >&2
    apt-get update -qq >&2 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
  else
    echo "note: no chromium found; browser steps and UI tests need it (apt-get install chromium)" >&2
  fi
fi
