#!/usr/bin/env bash
# One command from a fresh clone to a running service: installs Bun and the dependencies, builds dist/svc,
# creates the first user and API key (printed once) on the first start, then runs `svc serve`.
# Where the data lives and which port svc listens on are svc's own settings: SVC_DATA_DIR (default ./svc-data),
# SVC_PORT (default 8080), SVC_DATABASE_URL (PostgreSQL), or a config file named by SVC_CONFIG.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
export PATH="$PATH:$HOME/.local/bin" # where ensure-deps puts Bun when npm's global folder is not writable
bun run build >&2
EMAIL="${SVC_ADMIN_EMAIL:-admin@example.com}"
PASSWORD="$(head -c 18 /dev/urandom | base64 | tr -d '/+=' | head -c 20)"
# --if-first: only while the installation (SQLite or PostgreSQL) has no user; a later start changes nothing.
CREATED="$(printf '%s\n' "$PASSWORD" | ./dist/svc admin create-user --if-first --email "$EMAIL" --name Admin --workspace default --role owner --password-stdin)"
if [ -n "$CREATED" ]; then
  KEY="$(./dist/svc admin create-key --email "$EMAIL" --workspace default --name quickstart)"
  if [ -z "${SVC_CONFIG:-}" ]; then
    ADDRESS="http://127.0.0.1:${SVC_PORT:-8080}"
    STARTING="svc is starting on $ADDRESS"
  else
    ADDRESS="ADDRESS"
    STARTING="svc is starting with $SVC_CONFIG: its ADDRESS is on the 'svc listening on' line below"
  fi
  cat <<MSG

  $STARTING
  First user:  $EMAIL
  Password:    $PASSWORD
  API key:     $KEY      (shown once; only its hash is stored)

  Try:  curl -H "Authorization: Bearer $KEY" $ADDRESS/api/v1/ops/projects

MSG
fi
exec ./dist/svc serve
