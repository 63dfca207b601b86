#!/usr/bin/env bash
# Checks `svc mcp` with the official MCP inspector CLI (pinned: 2.x needs Bun or Node >= 22.19, so run it with bun).
#   SVC_SERVER=http://127.0.0.1:8080 SVC_API_KEY=svc_… scripts/mcp-inspect.sh                 # tools/list
#   scripts/mcp-inspect.sh --method tools/call --tool-name list_projects                     # any inspector arguments
#   scripts/mcp-inspect.sh --http [--method tools/list …]                                    # /mcp of SVC_SERVER over streamable HTTP
# The inspector starts the server with a clean environment, so the key and server are passed with -e.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${SVC_API_KEY:?set SVC_API_KEY to a key of the server to inspect}"
SERVER="${SVC_SERVER:-http://127.0.0.1:8080}"
INSPECTOR=@modelcontextprotocol/inspector@2.12.0
if [ "${1:-}" = "--http" ]; then
  shift
  if [ "$#" -eq 0 ]; then set -- --method tools/list; fi
  exec bunx --bun "$INSPECTOR" --cli "$SERVER/mcp${SVC_MCP_QUERY:-}" --transport http --header "Authorization: Bearer $SVC_API_KEY" "$@"
fi
BIN="${SVC_BIN:-./dist/svc}"
[ -x "$BIN" ] || { echo "$BIN is missing: run \`bun run build\` first" >&2; exit 2; }
if [ "$#" -eq 0 ]; then set -- --method tools/list; fi
exec bunx --bun "$INSPECTOR" --cli -e "SVC_SERVER=$SERVER" -e "SVC_API_KEY=$SVC_API_KEY" \
  ${SVC_PROJECT:+-e "SVC_PROJECT=$SVC_PROJECT"} "$BIN" mcp "$@"
