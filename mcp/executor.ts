// How a tool reaches an operation: `svc mcp` through the HTTP API of a running svc, `/mcp` on `svc serve`
// in-process through the core with the key's principal. Tools, results and errors are the same either way.
import type { ApiClient } from "../src/client/api-client";
import { ClientError } from "../src/client/errors";
import type { Operation } from "../src/manifest/define";

/** An operation's answer: its JSON (null for 204), or raw bytes (JUnit XML, a screenshot). */
export interface OpAnswer {
  json: unknown;
  raw: { contentType: string; bytes: Uint8Array } | null;
}

export interface CallOpts {
  /** For operations that start work: the same key answers a retried call with the first start. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface Executor {
  /** Calls `op` with one flat input (path parameters, query and body fields by their manifest names); errors are thrown as ClientError. */
  call(op: Operation, input: Record<string, unknown>, opts?: CallOpts): Promise<OpAnswer>;
}

/** The HTTP client of a running svc (stdio `svc mcp`). */
export function clientExecutor(client: ApiClient): Executor {
  return {
    async call(op, input, opts = {}) {
      try {
        const res = await client.send(op, input, opts);
        return { json: res.json, raw: res.raw };
      } catch (e) {
        // Over stdio nobody writes an Authorization header: say what the person running `svc mcp` can change.
        if (e instanceof ClientError && e.status === 401)
          throw new ClientError(
            401,
            "unauthorized",
            "the server refused the API key svc mcp uses (missing, invalid, revoked or expired): set SVC_API_KEY in the MCP client's configuration to a valid key (svc_…), or run `svc login`",
          );
        throw e;
      }
    },
  };
}
