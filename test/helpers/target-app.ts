// A local system under test for run-engine tests and the benchmark: JSON endpoints, a slow endpoint, one that
// drops the connection, and a small HTML app (a login form and a list page).
import type { Server } from "bun";

export interface TargetApp {
  url: string;
  /** Requests seen, by "METHOD path" (for checking what a run sent). */
  seen: { method: string; path: string; headers: Record<string, string>; body: string }[];
  stop(): Promise<void>;
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

export function startTargetApp(): TargetApp {
  const seen: TargetApp["seen"] = [];
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
      if (p === "/text") return new Response("hello plain world", { headers: { "content-type": "text/plain" } });
      if (p === "/big") return new Response("x".repeat(100_000), { headers: { "content-type": "text/plain" } });
      if (p === "/slow") {
        await Bun.sleep(Number(u.searchParams.get("ms") ?? "3000"));
        return Response.json({ slow: true });
      }
      // Redirects to a socket that hangs up on the first byte: the client sees the connection close unanswered.
      if (p === "/close") return new Response(null, { status: 307, headers: { location: `http://127.0.0.1:${dropper.port}/` } });
      if (p === "/status") return new Response(null, { status: Number(u.searchParams.get("code") ?? "200") });
      if (p === "/login" && req.method === "GET") return page("Sign in", LOGIN);
      if (p === "/login" && req.method === "POST") {
        const form = new URLSearchParams(body);
        if (form.get("password") === "s3cret-pass") return new Response(null, { status: 303, headers: { location: `/dashboard?user=${encodeURIComponent(form.get("email") ?? "")}` } });
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
    async stop() {
      dropper.stop(true);
      await server.stop(true);
    },
  };
}
