// Misbehaving run targets: a server that hangs, one that resets or closes the connection mid-response, 10 MB
// bodies (text and JSON), an endless body, a gzip bomb, a redirect loop, a header that never ends, invalid UTF-8
// (also labelled JSON) and a body that drips a byte at a time. Each run ends with a clear terminal status and
// message, stored excerpts stay size-capped, and the API answers while those runs are in progress (the read
// latency is printed, not asserted).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server as NetServer, type Socket } from "node:net";
import { startTestServer, type TestServer } from "./helpers/server";
import { createAutomation, getRun, projectWithEnv, startRun, waitForRun, type RunRecord } from "./helpers/runs";

const EXCERPT_BYTES = 4096;
const TEN_MB = 10 * 1024 * 1024;
// About 10 MB of JSON: 160,000 items of ~65 bytes.
const BIG_JSON = JSON.stringify({ items: Array.from({ length: 160_000 }, (_, i) => ({ id: i, name: `item number ${i} with some padding text` })) });

let s: TestServer;
let project: string;
let http: ReturnType<typeof Bun.serve>;
let raw: NetServer;
let rawUrl: string;
const sockets = new Set<Socket>();

/** Raw TCP behaviours that an HTTP server library would not produce, chosen by the request path. */
function rawTarget(socket: Socket): void {
  sockets.add(socket);
  socket.on("close", () => sockets.delete(socket));
  socket.on("error", () => {});
  let head = "";
  socket.on("data", (chunk) => {
    head += chunk.toString("latin1");
    if (!head.includes("\r\n\r\n")) return;
    const path = head.split(" ")[1] ?? "";
    if (path === "/hang") return; // reads the request, never answers
    if (path === "/reset-before") return void socket.resetAndDestroy();
    if (path === "/huge-header") {
      // A header line that never ends: 16 MB of it, then the connection stays open.
      socket.write("HTTP/1.1 200 OK\r\nx-big: ");
      const block = "a".repeat(64 * 1024);
      for (let i = 0; i < 256 && !socket.destroyed; i++) socket.write(block);
      return;
    }
    // Headers promise 1 MB, a few bytes follow, then the connection goes away.
    socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1048576\r\n\r\n{"partial": ');
    setTimeout(() => (path === "/reset-mid" ? socket.resetAndDestroy() : socket.end()), 50);
  });
}

function dripBody(): ReadableStream<Uint8Array> {
  let timer: ReturnType<typeof setInterval> | undefined;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      // One byte every 100 ms for up to a minute: far longer than any timeout below.
      let n = 0;
      timer = setInterval(() => {
        try {
          controller.enqueue(new Uint8Array([0x61]));
          if (++n >= 600) {
            clearInterval(timer);
            controller.close();
          }
        } catch {
          clearInterval(timer);
        }
      }, 100);
    },
    cancel() {
      clearInterval(timer);
    },
  });
}

/** 1 MiB chunks as fast as the reader takes them, without end (and without a content-length). */
function endlessBody(): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(1024 * 1024).fill(0x62);
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(chunk);
    },
  });
}

/** 256 MiB of zeros as about 250 KB of gzip, compressed a chunk at a time so the test itself stays small. */
async function gzipBomb(): Promise<Uint8Array<ArrayBuffer>> {
  const zeros = new Uint8Array(1024 * 1024);
  const stream = new CompressionStream("gzip");
  const writer = stream.writable.getWriter();
  const out = new Response(stream.readable).bytes();
  for (let i = 0; i < 256; i++) await writer.write(zeros);
  await writer.close();
  return out;
}
let GZIP_BOMB: Uint8Array<ArrayBuffer> = new Uint8Array();

// Bytes that are not UTF-8: a lone continuation byte, an overlong encoding, a truncated sequence, 0xFF.
const INVALID_UTF8 = new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0x80, 0xc0, 0xaf, 0xe2, 0x82, 0xff, 0x22, 0x7d]);

beforeAll(async () => {
  GZIP_BOMB = await gzipBomb();
  http = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/big-json") return new Response(BIG_JSON, { headers: { "content-type": "application/json" } });
      if (path === "/big") return new Response("x".repeat(TEN_MB), { headers: { "content-type": "text/plain" } });
      if (path === "/bad-utf8") return new Response(INVALID_UTF8, { headers: { "content-type": "text/plain; charset=utf-8" } });
      if (path === "/garbage-json")
        return new Response(new Uint8Array([0xff, 0xfe, 0x80, 0x7b, 0xc3, 0x28]), { headers: { "content-type": "application/json" } });
      if (path === "/bad-utf8-json") return new Response(INVALID_UTF8, { headers: { "content-type": "application/json" } });
      if (path === "/gzip-bomb") return new Response(GZIP_BOMB, { headers: { "content-type": "text/plain", "content-encoding": "gzip" } });
      if (path === "/redirect-loop") return new Response(null, { status: 302, headers: { location: "/redirect-loop" } });
      if (path === "/endless") return new Response(endlessBody(), { headers: { "content-type": "text/plain" } });
      if (path === "/drip") return new Response(dripBody(), { headers: { "content-type": "text/plain" } });
      return new Response("not found", { status: 404 });
    },
  });
  raw = createServer(rawTarget);
  await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
  const addr = raw.address();
  if (!addr || typeof addr === "string") throw new Error("the raw target has no port");
  rawUrl = `http://127.0.0.1:${addr.port}`;
  s = await startTestServer({
    rate_limit: { enabled: false },
    runner: { concurrency: 8, response_excerpt_bytes: EXCERPT_BYTES, max_response_bytes: 16 * 1024 * 1024 },
  });
  ({ project } = await projectWithEnv(s, "bad targets", { BASE_URL: `http://127.0.0.1:${http.port}`, RAW: rawUrl }));
});

afterAll(async () => {
  await s.stop();
  for (const sock of sockets) sock.destroy();
  await new Promise<void>((resolve) => raw.close(() => resolve()));
  await http.stop(true);
});

const automation = (steps: unknown[], timeoutMs = 10_000) => ({
  name: `t-${crypto.randomUUID().slice(0, 8)}`,
  kind: "http",
  environment: "test",
  timeout_ms: timeoutMs,
  steps,
});

/** The run's row as stored: its size proves the excerpts are capped in the database, not only in the API. */
async function storedResultsBytes(runId: string): Promise<number> {
  const [row] = await s.sql<{ results: string }>("SELECT results FROM runs WHERE id = ?", runId);
  if (!row) throw new Error(`run ${runId} is not in the database`);
  return Buffer.byteLength(row.results);
}

interface Case {
  name: string;
  steps: unknown[];
  timeoutMs?: number;
  check(run: RunRecord): void;
}

/** A response that started (HTTP 200) and then lost its connection: an error that says so. */
function brokeOffMidResponse(run: RunRecord): void {
  expect(run.status).toBe("error");
  expect(run.steps[0]?.message).toContain("(HTTP 200) broke off before its end");
  expect(run.steps[0]?.message).toContain("closed or reset the connection mid-response");
}

const cases: Case[] = [
  {
    name: "a target that never answers, with the step's request timeout",
    steps: [{ request: { url: "{{RAW}}/hang", timeout_ms: 700 } }],
    check(run) {
      expect(run.status).toBe("error");
      expect(run.steps[0]?.message).toContain("no response from GET");
      expect(run.steps[0]?.message).toContain("within 700 ms");
    },
  },
  {
    name: "a target that never answers, stopped by the automation's timeout_ms",
    steps: [{ request: { url: "{{RAW}}/hang" } }],
    timeoutMs: 1500,
    check(run) {
      expect(run.status).toBe("timed_out");
      expect(run.error).toContain("did not finish within its timeout of 1500 ms");
    },
  },
  {
    name: "a connection reset before any response",
    steps: [{ request: { url: "{{RAW}}/reset-before" } }],
    check(run) {
      expect(run.status).toBe("error");
      expect(run.steps[0]?.message).toContain("could not reach GET");
    },
  },
  {
    name: "a connection reset mid-response",
    steps: [{ request: { url: "{{RAW}}/reset-mid" } }],
    check: brokeOffMidResponse,
  },
  {
    name: "a connection closed mid-response (body shorter than its content-length)",
    steps: [{ request: { url: "{{RAW}}/close-mid" } }],
    check: brokeOffMidResponse,
  },
  {
    name: "a 10 MB body: the assertion sees all of it, the stored excerpt is capped",
    steps: [{ request: { url: "/big" }, expect: [{ status: 200 }, { body: { contains: "xxxx" } }, { header: "content-length", equals: String(TEN_MB) }] }],
    check(run) {
      expect(run.status).toBe("passed");
      const response = run.steps[0]?.response;
      expect(response?.truncated).toBe(true);
      expect(Buffer.byteLength(response?.body ?? "")).toBe(EXCERPT_BYTES);
    },
  },
  {
    name: "a 10 MB JSON body: assertions on the whole document record a capped actual value",
    steps: [
      {
        request: { url: "/big-json" },
        expect: [
          { json: "$", exists: true },
          { json: "$.items", type: "array" },
          { json: "$.items[159999].id", equals: 159_999 },
        ],
      },
    ],
    check(run) {
      expect(run.status).toBe("passed");
      expect(run.steps[0]?.response?.truncated).toBe(true);
      expect(JSON.stringify(run.steps[0]?.assertions).length).toBeLessThan(8192);
    },
  },
  {
    name: "an endless body: reading stops at the cap instead of filling memory, the step says so",
    steps: [{ request: { url: "/endless", timeout_ms: 20_000 }, expect: [{ status: 200 }] }],
    timeoutMs: 25_000,
    check(run) {
      expect(run.status).toBe("error");
      expect(run.steps[0]?.message).toContain(`is larger than 16 MiB: svc stopped reading it (runner.max_response_bytes)`);
      expect(run.steps[0]?.response?.status).toBe(200);
      expect(run.duration_ms ?? 0).toBeLessThan(15_000);
    },
  },
  {
    name: "a gzip bomb (small on the wire, 256 MiB inflated): reading stops at the cap",
    steps: [{ request: { url: "/gzip-bomb", timeout_ms: 20_000 } }],
    timeoutMs: 25_000,
    check(run) {
      expect(run.status).toBe("error");
      expect(run.steps[0]?.message).toContain(`is larger than 16 MiB: svc stopped reading it (runner.max_response_bytes)`);
    },
  },
  {
    name: "a redirect loop",
    steps: [{ request: { url: "/redirect-loop", timeout_ms: 5000 } }],
    check(run) {
      expect(run.status).toBe("error");
      expect(run.steps[0]?.message).toContain("redirected more than 20 times");
    },
  },
  {
    name: "a response header that never ends",
    steps: [{ request: { url: "{{RAW}}/huge-header", timeout_ms: 3000 } }],
    check(run) {
      expect(run.status).toBe("error");
      expect(run.steps[0]?.message).toMatch(/could not reach GET|no response from GET/);
    },
  },
  {
    name: "invalid UTF-8 as text: decoded with replacement characters, the body assertion says what it saw",
    steps: [{ request: { url: "/bad-utf8" }, expect: [{ status: 200 }, { body: { contains: "never there" } }] }],
    check(run) {
      expect(run.status).toBe("failed");
      expect(run.steps[0]?.message).toContain("never there");
      expect(run.steps[0]?.response?.body).toContain("\uFFFD");
    },
  },
  {
    name: "invalid UTF-8 inside a JSON string: decoded with replacement characters, the json assertion shows them",
    steps: [{ request: { url: "/bad-utf8-json" }, expect: [{ json: "$.a", equals: "clean" }] }],
    check(run) {
      expect(run.status).toBe("failed");
      expect(run.steps[0]?.message).toContain('$.a: expected "clean", got "');
      expect(run.steps[0]?.message).toContain("\uFFFD");
    },
  },
  {
    name: "invalid UTF-8 labelled JSON that is not JSON: the json assertion and the capture say the body is not JSON",
    steps: [{ request: { url: "/garbage-json" }, expect: [{ json: "$.a", exists: true }], capture: { a: "$.a" } }],
    check(run) {
      expect(run.status).toBe("failed");
      expect(run.steps[0]?.message).toContain("$.a: the body is not JSON");
      expect(run.steps[0]?.message).toContain("capture a: $.a is not in the response (the body is not JSON)");
    },
  },
  {
    name: "a body that drips one byte at a time, with the step's request timeout",
    steps: [{ request: { url: "/drip", timeout_ms: 800 } }],
    check(run) {
      expect(run.status).toBe("error");
      expect(run.steps[0]?.message).toContain("(HTTP 200) did not complete within 800 ms");
      expect(run.duration_ms ?? 0).toBeLessThan(8000);
    },
  },
  {
    name: "a body that drips one byte at a time, stopped by the automation's timeout_ms",
    steps: [{ request: { url: "/drip" } }],
    timeoutMs: 1500,
    check(run) {
      expect(run.status).toBe("timed_out");
      expect(run.error).toContain("did not finish within its timeout of 1500 ms");
    },
  },
];

describe("runs against misbehaving targets", () => {
  test("every run ends with a clear result, excerpts stay capped, and the API answers meanwhile", async () => {
    const started: { c: Case; runId: string }[] = [];
    for (const c of cases) {
      const id = await createAutomation(s, project, automation(c.steps, c.timeoutMs));
      started.push({ c, runId: await startRun(s, project, id) });
    }
    // While the runs are in progress (until the last one ends): time API reads of a project.
    const latencies: number[] = [];
    const inProgressCounts: number[] = [];
    const inProgress = async () =>
      (await Promise.all(started.map(async (x) => (await getRun(s, project, x.runId)).status))).filter((st) => st === "running" || st === "queued").length;
    for (let i = 0; i < 400; i++) {
      if (i % 10 === 0) {
        const n = await inProgress();
        if (n === 0) break;
        inProgressCounts.push(n);
      }
      const t0 = performance.now();
      const res = await s.call("GET", `/projects/${project}`);
      latencies.push(performance.now() - t0);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      await Bun.sleep(20);
    }
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => (latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0).toFixed(1);
    console.log(
      `GET /projects/${project} while ${inProgressCounts[0]}..${inProgressCounts.at(-1)} bad-target runs were in progress: ${latencies.length} reads, median ${pct(0.5)} ms, p99 ${pct(0.99)} ms, max ${pct(1)} ms`,
    );
    expect(latencies.length).toBeGreaterThan(0);

    for (const { c, runId } of started) {
      const run = await waitForRun(s, project, runId, 20_000);
      try {
        c.check(run);
        expect(run.attempts.length).toBe(1);
        if (run.status !== "passed") expect(`${run.error ?? ""}${run.steps[0]?.message ?? ""}`.length).toBeGreaterThan(10);
        expect(await storedResultsBytes(runId)).toBeLessThan(EXCERPT_BYTES * 2 + 4096);
      } catch (e) {
        throw new Error(`${c.name}: ${(e as Error).message}\nrun: ${JSON.stringify(run).slice(0, 2000)}`);
      }
    }
    // Server, engine and targets share this process: its peak RSS bounds what the bad bodies cost.
    const peakKb = Number(/VmHWM:\s+(\d+)/.exec(await Bun.file("/proc/self/status").text())?.[1] ?? "0");
    console.log(`peak RSS of the test process (server + targets) after all bad-target runs: ${(peakKb / 1024).toFixed(0)} MB`);
  }, 60_000);

  test("the server still serves reads and writes after the bad targets", async () => {
    expect((await s.call("GET", `/projects/${project}`)).status).toBe(200);
    expect((await s.call("POST", "/projects", { name: "after" })).status).toBe(201);
    expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
  });
});
