#!/usr/bin/env bash
# One command from a fresh clone to a running service: installs Bun and the dependencies, builds dist/svc,
# creates the first user and API key (printed once) on first start, then runs `svc serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
export PATH="$PATH:$HOME/.local/bin" # where ensure-deps puts Bun when npm's global folder is not writable
bun run build >&2
DATA_DIR="${SVC_DATA_DIR:-./svc-data}"
PORT="${SVC_PORT:-8080}"
if [ ! -f "$DATA_DIR/svc.sqlite" ]; then
  EMAIL="${SVC_ADMIN_EMAIL:-admin@example.com}"
  PASSWORD="$(head -c 18 /dev/urandom | base64 | tr -d '/+=' | head -c 20)"
  printf '%s\n' "$PASSWORD" | ./dist/svc admin create-user --email "$EMAIL" --name Admin --workspace default --role owner --password-stdin --data-dir "$DATA_DIR" >/dev/null
  KEY="$(./dist/svc admin create-key --email "$EMAIL" --workspace default --name quickstart --data-dir "$DATA_DIR")"
  cat <<MSG

  svc is starting on http://127.0.0.1:$PORT
  First user:  $EMAIL
  Password:    $PASSWORD
  API key:     $KEY      (shown once; only its hash is stored)

  Try:  curl -H "Authorization: Bearer $KEY" http://127.0.0.1:$PORT/api/v1/ops/projects

MSG
fi
exec ./dist/svc serve --data-dir "$DATA_DIR" --port "$PORT"
