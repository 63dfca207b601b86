// A local system under test for run-engine tests and the benchmark: JSON endpoints, a slow endpoint, one that
// drops the connection, one that holds requests and records when each was in flight, and a small HTML app (a
// login form, a list page, and pages that set and show a cookie and localStorage).
import type { Server } from "bun";

export interface TargetApp {
  url: string;
  /** Requests seen, by "METHOD path" (for checking what a run sent). */
  seen: { method: string; path: string; headers: Record<string, string>; body: string }[];
  /** Requests to /hold/{key}, by key: when each arrived and when its answer left (performance.now()). */
  held(key: string): HoldInterval[];
  /** Lets the requests to /hold/{key} go on: until then they wait (before their `ms` of holding). */
  release(key: string): void;
  stop(): Promise<void>;
}

export interface HoldInterval {
  start: number;
  end: number | null;
}

/** The most intervals open at one instant (an end at the same instant as a start counts as before it). */
export function maxOverlap(intervals: { start: number; end: number }[]): number {
  const events = intervals
    .flatMap(
      (i) =>
        [
          [i.start, 1],
          [i.end, -1],
        ] as [number, number][],
    )
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let max = 0;
  for (const [, d] of events) {
    open += d;
    max = Math.max(max, open);
  }
  return max;
}

const items = [
  { id: 1, name: "apple", price: 3, tags: ["fruit", "red"] },
  { id: 2, name: "bread", price: 5, tags: ["bakery"] },
  { id: 3, name: "cheese", price: 12, tags: [] },
];

const page = (title: string, body: string) =>
  new Response(`<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`, {
    headers: { "content-type": "text/html; charset=utf-8" },
  });

const LOGIN = `<h1>Sign in</h1>
<form method="post" action="/login">
  <label for="email">Email</label><input id="email" name="email" type="email">
  <label for="password">Password</label><input id="password" name="password" type="password">
  <label><input type="checkbox" name="remember" id="remember"> Remember me</label>
  <label for="team">Team</label><select id="team" name="team"><option value="qa">QA</option><option value="dev">Dev</option></select>
  <button type="submit">Sign in</button>
</form>
<p id="hint" style="display:none">secret hint</p>`;

const LIST = `<h1>Items</h1>
<input data-testid="filter" placeholder="filter" oninput="for (const li of document.querySelectorAll('li')) li.hidden = !li.textContent.includes(this.value)">
<ul>${items.map((i) => `<li data-testid="item">${i.name}</li>`).join("")}</ul>
<button onclick="setTimeout(() => document.getElementById('later').hidden = false, 300)">Load more</button>
<p id="later" hidden>Loaded later</p>
<a href="/items-page" onmouseover="document.getElementById('tip').hidden = false">hover me</a><span id="tip" hidden>Tooltip</span>`;

/** A page that shows what the browser sends and keeps: its cookie header and a localStorage value. */
const SESSION_SHOW = (cookie: string) => `<h1>Session</h1>
<p id="cookie">cookie: ${cookie.replace(/[<>&"]/g, "") || "none"}</p>
<p id="storage">storage: pending</p>
<script src="/session/show.js"></script>`;
const SESSION_SHOW_JS = `document.getElementById("storage").textContent = "storage: " + (localStorage.getItem("svc-test") ?? "none");`;
const SESSION_SET_JS = `const v = new URLSearchParams(location.search).get("v"); localStorage.setItem("svc-test", v); document.getElementById("done").hidden = false;`;

/** A local target that counts the requests to each path (as they arrive), waits the `delayMs` the path is given, and answers `{ ok: true, path }`. */
export interface CountingTarget {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** Requests so far, by path. */
  hits: Map<string, number>;
  stop(): Promise<void>;
}

export function startCountingTarget(delayMs: (path: string) => number = () => 0): CountingTarget {
  const hits = new Map<string, number>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const ms = delayMs(path);
      if (ms > 0) await Bun.sleep(ms);
      return Response.json({ ok: true, path });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, hits, stop: () => server.stop(true) };
}

export function startTargetApp(): TargetApp {
  const seen: TargetApp["seen"] = [];
  const holds = new Map<string, HoldInterval[]>();
  const gates = new Map<string, { open: Promise<void>; release(): void }>();
  const gate = (key: string) => {
    let g = gates.get(key);
    if (!g) {
      let release = () => {};
      const open = new Promise<void>((r) => {
        release = r;
      });
      g = { open, release };
      gates.set(key, g);
    }
    return g;
  };
  let nextId = 100;
  const calls = new Map<string, number>();
  const dropper = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data: (socket) => {
        socket.end();
      },
      open: () => undefined,
    },
  });
  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const u = new URL(req.url);
      const body = req.method === "GET" || req.method === "HEAD" ? "" : await req.text();
      seen.push({ method: req.method, path: `${u.pathname}${u.search}`, headers: Object.fromEntries(req.headers), body });
      const p = u.pathname;
      if (p === "/health") return Response.json({ ok: true });
      if (p === "/items" && req.method === "GET") return Response.json({ items, total: items.length }, { headers: { "x-total": String(items.length) } });
      if (p === "/items" && req.method === "POST") {
        let parsed: unknown;
        try {
          parsed = JSON.parse(body);
        } catch {
          return Response.json({ error: "bad json" }, { status: 400 });
        }
        return Response.json({ id: nextId++, ...(parsed as object) }, { status: 201, headers: { location: `/items/${nextId - 1}` } });
      }
      const m = /^\/items\/(\d+)$/.exec(p);
      if (m) {
        const item = items.find((i) => i.id === Number(m[1]));
        return item ? Response.json(item) : Response.json({ error: "not found" }, { status: 404 });
      }
      if (p === "/echo") {
        return Response.json({ method: req.method, query: Object.fromEntries(u.searchParams), headers: Object.fromEntries(req.headers), body });
      }
      // Fails the first `fail` calls for a key, then answers 200: for retries.
      const flaky = /^\/flaky\/([\w-]+)$/.exec(p);
      if (flaky) {
        const key = flaky[1] as string;
        const n = (calls.get(key) ?? 0) + 1;
        calls.set(key, n);
        const fail = Number(u.searchParams.get("fail") ?? "1");
        return n <= fail ? Response.json({ call: n }, { status: 500 }) : Response.json({ call: n });
      }
      // Holds the request until released by the test, then `ms` more, and records when it was in flight.
      const hold = /^\/hold\/([\w-]+)$/.exec(p);
      if (hold) {
        const key = hold[1] as string;
        const interval: HoldInterval = { start: performance.now(), end: null };
        holds.set(key, [...(holds.get(key) ?? []), interval]);
        await gate(key).open;
        await Bun.sleep(Number(u.searchParams.get("ms") ?? "300"));
        interval.end = performance.now();
        return Response.json({ held: key });
      }
      if (p === "/session/set") {
        const v = u.searchParams.get("v") ?? "";
        return new Response(
          `<!doctype html><html><head><meta charset="utf-8"><title>Set</title></head><body><p id="done" hidden>Session set</p><script src="/session/set.js"></script></body></html>`,
          { headers: { "content-type": "text/html; charset=utf-8", "set-cookie": `svc_test=${encodeURIComponent(v)}; Path=/; Max-Age=3600` } },
        );
      }
      if (p === "/session/set.js") return new Response(SESSION_SET_JS, { headers: { "content-type": "text/javascript" } });
      if (p === "/session/show") return page("Session", SESSION_SHOW(req.headers.get("cookie") ?? ""));
      if (p === "/session/show.js") return new Response(SESSION_SHOW_JS, { headers: { "content-type": "text/javascript" } });
      if (p === "/lines") return new Response("first line\nsecond line: order 42 shipped\nthird line\n", { headers: { "content-type": "text/plain" } });
      if (p === "/text") return new Response("hello plain world", { headers: { "content-type": "text/plain" } });
      if (p === "/big") return new Response("x".repeat(100_000), { headers: { "content-type": "text/plain" } });
      if (p === "/slow") {
        await Bun.sleep(Number(u.searchParams.get("ms") ?? "3000"));
        return Response.json({ slow: true });
      }
      // Redirects to a socket that hangs up on the first byte: the client sees the connection close unanswered.
      if (p === "/close") return new Response(null, { status: 307, headers: { location: `http://127.0.0.1:${dropper.port}/` } });
      // A 307 to wherever ?to= says: method, body and the step's own headers go along.
      // A form whose action is wherever the query says (another host, for the protected-secrets tests).
      if (p === "/form-to")
        return page(
          "Search",
          `<form method="get" action="${(u.searchParams.get("action") ?? "/").replace(/[<>&"]/g, "")}"><label for="q">Query</label><input id="q" name="q"><button type="submit">Go</button></form>`,
        );
      if (p === "/redirect-to") return new Response(null, { status: 307, headers: { location: u.searchParams.get("to") ?? "/" } });
      if (p === "/status") return new Response(null, { status: Number(u.searchParams.get("code") ?? "200") });
      if (p === "/login" && req.method === "GET") return page("Sign in", LOGIN);
      if (p === "/login" && req.method === "POST") {
        const form = new URLSearchParams(body);
        if (form.get("password") === "s3cret-pass")
          return new Response(null, { status: 303, headers: { location: `/dashboard?user=${encodeURIComponent(form.get("email") ?? "")}` } });
        return page("Sign in", `<p role="alert">Wrong password</p>${LOGIN}`);
      }
      if (p === "/dashboard") return page("Dashboard", `<h1>Welcome ${u.searchParams.get("user") ?? ""}</h1><a href="/items-page">Items</a>`);
      if (p === "/items-page") return page("Items", LIST);
      return Response.json({ error: "no such route" }, { status: 404 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    seen,
    held: (key) => holds.get(key) ?? [],
    release: (key) => gate(key).release(),
    async stop() {
      for (const g of gates.values()) g.release();
      dropper.stop(true);
      await server.stop(true);
    },
  };
}
