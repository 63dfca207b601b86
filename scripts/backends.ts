// Which test files run a second time on PostgreSQL (SVC_TEST_BACKEND=postgres), in one place. `npm test` runs the
// whole suite on SQLite, then these files on PostgreSQL, and its closing line sums both.
//
// Every test file is in exactly one of three groups: run on both backends (POSTGRES), SQLite-only with the reason
// (SQLITE_ONLY), or not touching the store at all (everything else: contracts, docs, the CLI's own parsing,
// install scripts — running them again would test nothing new). test/backends-list.test.ts checks that both
// lists name existing files and that every file starting a test server is in one of them.

/** Run on SQLite and again on PostgreSQL. */
export const POSTGRES: string[] = [
  "test/api-auth.test.ts",
  "test/api-cache-policy.test.ts",
  "test/api-create-key.test.ts",
  "test/api-damaged-columns.test.ts",
  "test/api-feature-batches.test.ts",
  "test/api-filters.test.ts",
  "test/api-idempotency.test.ts",
  "test/api-invitations-admin.test.ts",
  "test/api-members.test.ts",
  "test/api-names.test.ts",
  "test/api-operations.test.ts",
  "test/api-ratelimit.test.ts",
  "test/api-smoke.test.ts",
  "test/api-validation.test.ts",
  "test/cli-artifacts.test.ts",
  "test/cli-client.test.ts",
  "test/cli-commands.test.ts",
  "test/cli-errors.test.ts",
  "test/cli-watch.test.ts",
  "test/contract-openapi.test.ts",
  "test/core-call.test.ts",
  "test/faults-targets.test.ts",
  "test/generation-crawl.test.ts",
  "test/generation-gherkin-values.test.ts",
  "test/generation-gherkin.test.ts",
  "test/generation-llm.test.ts",
  "test/generation-openapi.test.ts",
  "test/generation-run.test.ts",
  "test/http-bodies.test.ts",
  "test/http-headers.test.ts",
  "test/http-proxy.test.ts",
  "test/mcp-inspector.test.ts",
  "test/mcp-server.test.ts",
  "test/mcp-wait.test.ts",
  "test/postgres-backend.test.ts",
  "test/rules-surfaces.test.ts",
  "test/runner-browser-isolation.test.ts",
  "test/runner-browser.test.ts",
  "test/runner-http.test.ts",
  "test/runner-lifecycle.test.ts",
  "test/security-auth-matrix.test.ts",
  "test/security-key-timing.test.ts",
];

/** Files whose subject is SQLite itself (its file, its locks, its backups, its old databases), with the reason. */
export const SQLITE_ONLY: Record<string, string> = {
  "test/api-idempotency-atomic.test.ts": "plants a failing trigger in the SQLite file and shares that file between two in-process nodes",
  "test/api-keys.test.ts": "reads the key hashes and searches the bytes of svc.sqlite and its WAL file",
  "test/appliance-backup.test.ts": "svc admin backup/restore copy SQLite's file (on PostgreSQL they refuse and point to pg_dump)",
  "test/appliance-operations.test.ts": "locks the SQLite file from another connection to fail /readyz",
  "test/faults-storage.test.ts": "holds SQLite's write lock from another process and kills the server mid-write on its file",
  "test/fuzz-operations.test.ts": "snapshots every table through sqlite_master to prove a refused request changed nothing",
  "test/runner-health.test.ts": "holds SQLite's exclusive lock to make claims fail",
  "test/storage-seam.test.ts": "opens its own SQLite store to hold its single connection",
  "test/trust-browser-url-expectations.test.ts": "migrates an old SQLite database written by an earlier svc",
  "test/trust-secrets-storage.test.ts": "searches the bytes of svc.sqlite and its WAL file for secrets",
};
