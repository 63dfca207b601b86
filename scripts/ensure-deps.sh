#!/usr/bin/env bash
# Installs what svc needs to build and test on a machine that has only node/npm:
# Bun (from the npm registry), the locked dependencies, and Debian's Chromium (its headless shell for browser
# steps and UI tests, the full browser as well).
set -euo pipefail
cd "$(dirname "$0")/.."

# Without write access to npm's global folder (a non-root user and a system-wide node), Bun goes to ~/.local;
# the npm scripts look there too.
export PATH="$PATH:$HOME/.local/bin"
if ! command -v bun >/dev/null 2>&1; then
  echo "installing bun from the npm registry" >&2
  npm install -g bun >&2 || npm install -g --prefix "$HOME/.local" bun >&2
fi
if [ ! -d node_modules ] || [ "${CI:-}" = "true" ]; then
  bun install --frozen-lockfile >&2
fi
# Debian packages: chromium-headless-shell (browser steps, UI tests), chromium (the full browser, the fallback),
# firefox-esr (the UI tests in Firefox), wrk (the HTTP benchmarks), shellcheck (install scripts).
missing=()
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
command -v chromium-headless-shell >/dev/null 2>&1 || missing+=(chromium-headless-shell)
command -v firefox-esr >/dev/null 2>&1 || missing+=(firefox-esr)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck) # the install scripts' tests
# Used by the appliance tests (unit file check, TLS certificates, the curl-based install script).
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v curl >/dev/null 2>&1 || missing+=(curl)
# PostgreSQL (initdb, pg_ctl): the suite runs again on PostgreSQL in a throw-away cluster (test/helpers/postgres.ts).
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${missing[*]} (Debian packages)" >&2
    apt-get update -qq >&2 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 ||
      echo "warning: could not install ${missing[*]}: the service runs without them; browser steps, UI tests and benchmarks need them" >&2
  else
    echo "note: missing ${missing[*]}: browser steps, UI tests and benchmarks need them (apt-get install ${missing[*]})" >&2
  fi
fi
# Hurl 7 (Debian sid's packages, unpacked under .cache/hurl without touching the system's apt): the exported Hurl
# files are run by it. Without it the tests that run Hurl fail (they fetch it themselves once more, then fail).
bash scripts/hurl.sh --fetch ||
  echo "warning: could not fetch Hurl 7 (scripts/hurl.sh): the Hurl export tests will fail" >&2
