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

type Read = { automations: { id: string; steps: { request: Record<string, unknown> }[] }[]; warnings: { message: string }[] };
const readCurl = async (command: string) => {
  const res = await s.call("POST", "/projects/imp/imports/curl", { command });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Read;
};

test("Chrome's $'…' quoting is read as bash reads it: \\' \\\" \\\\ \\n \\t \\xHH \\uHHHH, and the body is sent as written", async () => {
  // As Chrome writes a JSON body: ' and \ escaped for bash, the JSON's own escapes doubled.
  const command = String.raw`curl '${target.url}/echo' -H 'content-type: application/json' --data-raw $'{"name":"it\'s new","q":"say \\"hi\\"","lines":"a\\nb"}'`;
  const out = await readCurl(command);
  expect(out.warnings).toEqual([]);
  expect(out.automations[0]?.steps[0]?.request.json).toEqual({ name: "it's new", q: 'say "hi"', lines: "a\nb" });
  // Every escape bash reads in $'…'.
  const text = await readCurl(
    String.raw`curl ${target.url}/echo -H 'Content-Type: text/plain' --data-binary $'\'\"\\|\n|\t|\r|\x41\xc3\xa9|\u00e9\U0001F600|\101|\q'`,
  );
  expect(text.automations[0]?.steps[0]?.request.body).toBe("'\"\\|\n|\t|\r|Aé|é😀|A|\\q");
  const run = (await (await s.call("POST", `/projects/imp/automations/${out.automations[0]?.id}/run`, {})).json()) as { id: string };
  expect((await waitForRun(s, "imp", run.id, 120_000)).status).toBe("passed");
  expect(target.seen.some((r) => r.path === "/echo" && r.body.includes("it's new"))).toBe(true);
}, 130_000);

test("short options take an attached value as curl reads them (-XPUT, -HName:value, -dbody, -sXPOST); Windows line continuations join", async () => {
  const put = await readCurl(`curl -XPUT ${target.url}/echo -d x`);
  expect(put.automations[0]?.steps[0]?.request).toMatchObject({ method: "PUT", body: "x" });
  const del = await readCurl(`curl -sSL -XDELETE -HX-Trace:abc ${target.url}/items/1`);
  expect(del.automations[0]?.steps[0]?.request).toEqual({ method: "DELETE", url: `${target.url}/items/1`, headers: { "X-Trace": "abc" } });
  expect(del.warnings).toEqual([]);
  const post = await readCurl(`curl -sXPATCH -dname=1 -uann:pw ${target.url}/echo`);
  expect(post.automations[0]?.steps[0]?.request).toMatchObject({ method: "PATCH", body: "name=1", headers: { Authorization: `Basic ${btoa("ann:pw")}` } });
  const windows = await readCurl(`curl -X POST \\\r\n  ${target.url}/echo \\\r\n  -d a=1\r\n`);
  expect(windows.automations[0]?.steps[0]?.request).toMatchObject({ method: "POST", url: `${target.url}/echo`, body: "a=1" });
  expect(windows.warnings).toEqual([]);
});
