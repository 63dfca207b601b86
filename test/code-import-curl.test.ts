// Importers: a cURL command line becomes an http automation that runs and passes against the target.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

let s: TestServer;
let target: TargetApp;

beforeAll(async () => {
  s = await startTestServer();
  target = startTargetApp();
  expect((await s.call("POST", "/projects", { name: "imp", slug: "imp" })).status).toBe(201);
});
afterAll(async () => {
  await target.stop();
  await s.stop();
});

test("a cURL command with --json, -H and -u imports as one automation that runs and passes; unknown flags are warnings", async () => {
  const command = `curl -sS -X POST '${target.url}/items' \\\n  -H 'X-Trace: abc' -u 'ann:s3cret' --json '{"name": "from curl"}' --http1.1`;
  const res = await s.call("POST", "/projects/imp/imports/curl", { command });
  expect(res.status).toBe(201);
  const out = (await res.json()) as {
    automations: { id: string; name: string; source: string; steps: { request: Record<string, unknown> }[] }[];
    warnings: { request: string; message: string }[];
  };
  const [a] = out.automations;
  expect(a).toMatchObject({ name: "POST /items", source: "imported" });
  expect(a?.steps[0]?.request).toMatchObject({
    method: "POST",
    json: { name: "from curl" },
    headers: { "X-Trace": "abc", Authorization: `Basic ${btoa("ann:s3cret")}` },
  });
  expect(out.warnings).toEqual([{ request: "POST /items", message: "the option --http1.1 is not understood and was left out" }]);
  // The same command again: the name gets a suffix.
  const again = (await (await s.call("POST", "/projects/imp/imports/curl", { command: `curl ${target.url}/items` })).json()) as {
    automations: { name: string }[];
  };
  expect(again.automations[0]?.name).toBe("GET /items");
  const third = (await (await s.call("POST", "/projects/imp/imports/curl", { command: `curl ${target.url}/items` })).json()) as {
    automations: { name: string }[];
  };
  expect(third.automations[0]?.name).toBe("GET /items (2)");

  const run = (await (await s.call("POST", `/projects/imp/automations/${a?.id}/run`, {})).json()) as { id: string };
  expect((await waitForRun(s, "imp", run.id, 120_000)).status).toBe("passed");
  const seen = target.seen.find((r) => r.method === "POST" && r.path === "/items");
  expect(seen?.headers["x-trace"]).toBe("abc");
  expect(JSON.parse(seen?.body ?? "{}")).toEqual({ name: "from curl" });
}, 130_000);

test("-G sends the data as the query of a GET, --data-urlencode encodes it, and an option's own value is never taken for the URL", async () => {
  type Out = { automations: { id: string; steps: { request: Record<string, unknown> }[] }[]; warnings: { message: string }[] };
  const read = async (command: string) => (await (await s.call("POST", "/projects/imp/imports/curl", { command })).json()) as Out;
  const get = await read(`curl -G ${target.url}/echo -d page=2 -d per_page=1`);
  expect(get.automations[0]?.steps[0]?.request).toEqual({ method: "GET", url: `${target.url}/echo?page=2&per_page=1` });
  const encoded = await read(`curl ${target.url}/echo --data-urlencode 'email=a@b.c' -d password=pw`);
  expect(encoded.automations[0]?.steps[0]?.request).toMatchObject({ method: "POST", body: "email=a%40b.c&password=pw" });
  const form = await read(`curl -F 'file=@x.txt' ${target.url}/echo`);
  expect(form.automations[0]?.steps[0]?.request).toEqual({ method: "POST", url: `${target.url}/echo` });
  expect(form.warnings.map((w) => w.message)).toEqual([
    "the multipart form field file=@x.txt (-F) is not imported: svc steps send JSON, text or form-encoded bodies",
  ]);
  const options = await read(`curl --max-redirs 0 --frobnicate 3 ${target.url}/items`);
  expect(options.automations[0]?.steps[0]?.request).toEqual({ method: "GET", url: `${target.url}/items` });
  expect(options.warnings.map((w) => w.message)).toEqual([
    "--max-redirs 0 has no counterpart and was left out",
    "the option --frobnicate 3 is not understood and was left out",
  ]);
  // The GET as curl sends it: the query reaches the target.
  const run = (await (await s.call("POST", `/projects/imp/automations/${get.automations[0]?.id}/run`, {})).json()) as { id: string };
  expect((await waitForRun(s, "imp", run.id, 120_000)).status).toBe("passed");
  expect(target.seen.some((r) => r.method === "GET" && r.path === "/echo?page=2&per_page=1")).toBe(true);
}, 130_000);

test("a command that cannot be read is a 400 naming the command and changes nothing", async () => {
  const res = await s.call("POST", "/projects/imp/imports/curl", { command: "curl -H 'unclosed" });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { details: { path: string }[] }).details[0]?.path).toBe("command");
});
