// One table (src/manifest/errors.ts ERROR_TABLE) maps every error code to its HTTP status, CLI exit code and MCP
// isError; the server, the client, the CLI and the MCP server all read it, and nothing maps codes on its own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { errorResult } from "../mcp/tools";
import { ApiClient } from "../src/client/api-client";
import { ClientError, exitCodeFor } from "../src/client/errors";
import { errorResponse } from "../src/http/errors";
import { ops } from "../src/manifest";
import { ERROR_TABLE, type ErrorCode } from "../src/manifest/errors";

const ROOT = resolve(import.meta.dir, "..");
const codes = Object.keys(ERROR_TABLE) as ErrorCode[];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(p) && !/\.test\.tsx?$/.test(p) ? [p] : [];
  });
}

describe("the error table", () => {
  test("no adapter maps HTTP statuses to error codes (or back) on its own", () => {
    const statusToCode = /\b[45]\d\d\s*:\s*"[a-z_]+"/;
    const codeToStatus = new RegExp(`\\b(${codes.join("|")})\\s*:\\s*[45]\\d\\d\\b`);
    const offenders = ["src", "cli", "mcp"]
      .flatMap((d) => sourceFiles(join(ROOT, d)))
      .filter((f) => !f.endsWith(join("src", "manifest", "errors.ts")))
      .filter((f) => {
        const text = readFileSync(f, "utf8");
        return statusToCode.test(text) || codeToStatus.test(text);
      })
      .map((f) => relative(ROOT, f));
    expect(offenders).toEqual([]);
  });

  test("the server answers each code with the table's status", async () => {
    for (const code of codes) expect({ code, status: errorResponse(code, "x").status }).toEqual({ code, status: ERROR_TABLE[code].status });
  });

  test("the CLI exits with the table's code, and MCP marks the result as the table says", () => {
    for (const code of codes) {
      const e = new ClientError(ERROR_TABLE[code].status, code, "x");
      expect({ code, exit: exitCodeFor(e), isError: errorResult(e).isError }).toEqual({
        code,
        exit: ERROR_TABLE[code].exit,
        isError: ERROR_TABLE[code].mcpIsError,
      });
    }
  });

  describe("a response without the error shape (a proxy's page) reads as the table's code for its status", () => {
    let server: ReturnType<typeof Bun.serve>;
    let nextStatus = 500;
    beforeAll(() => {
      server = Bun.serve({ port: 0, fetch: () => new Response("<html>proxy</html>", { status: nextStatus }) });
    });
    afterAll(() => server.stop(true));

    test("every status of the table, and statuses it lacks", async () => {
      const client = new ApiClient({ server: `http://127.0.0.1:${server.port}`, key: "svc_x", userAgent: "test", maxRetries: 0 });
      const seen: { status: number; code: string; exit: number }[] = [];
      for (const status of [...codes.map((c) => ERROR_TABLE[c].status), 418, 502]) {
        nextStatus = status;
        const err = await client.send(ops.listProjects, {}).then(
          () => null,
          (e: unknown) => e as ClientError,
        );
        if (!err) throw new Error(`status ${status} did not fail`);
        seen.push({ status, code: err.error, exit: exitCodeFor(err) });
      }
      const expected: { status: number; code: string; exit: number }[] = codes.map((c) => ({
        status: ERROR_TABLE[c].status,
        code: c,
        exit: ERROR_TABLE[c].exit,
      }));
      expected.push({ status: 418, code: "invalid_request", exit: 2 }, { status: 502, code: "internal_error", exit: 6 });
      expect(seen).toEqual(expected);
    });
  });
});
