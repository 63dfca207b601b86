// Tests as code: how `svc apply` reads a folder and its flags. --exit-code only with --dry-run, an empty folder
// refused, .json files read as JSON, a multi-document YAML file and a group's missing members told plainly.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { writeFolder } from "./helpers/folder";

setDefaultTimeout(60_000);

let s: TestServer;
let cli: SourceCli;

beforeAll(async () => {
  s = await startTestServer();
  expect((await s.call("POST", "/projects", { name: "folder", slug: "folder" })).status).toBe(201);
  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "folder" });
});
afterAll(async () => {
  cli.remove();
  await s.stop();
});

const folder = (files: Record<string, string>) => writeFolder(files, tempDir("svc-apply-folder-"));

async function automationNames() {
  const page = (await (await s.call("GET", "/projects/folder/automations?limit=200")).json()) as { data: { name: string }[] };
  return page.data.map((a) => a.name).sort();
}

const automation = (name: string) => `name: ${name}\nkind: http\nsteps:\n  - request: { url: "http://127.0.0.1:9/" }\n`;

test("--exit-code without --dry-run is a usage error (exit 2) before anything is applied", async () => {
  const dir = folder({ "a.yaml": automation("Not applied") });
  const r = await cli.run(["apply", dir, "--exit-code"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("--exit-code goes with --dry-run");
  expect(r.stdout).toBe("");
  expect(await automationNames()).toEqual([]);
});

test("an empty folder is refused (exit 2), with --prune too: the applied records stay; the API refuses pruning to no documents", async () => {
  expect((await cli.run(["apply", folder({ "kept.yaml": automation("Kept") })])).code).toBe(0);
  const empty = tempDir("svc-apply-empty-");
  for (const args of [
    ["apply", empty, "--prune"],
    ["apply", empty, "--prune", "--dry-run"],
    ["apply", empty],
  ]) {
    const r = await cli.run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("holds no .yaml, .yml or .json file: nothing to apply");
    expect(r.stdout).toBe("");
  }
  const api = await s.call("POST", "/projects/folder/apply", { documents: [], prune: true });
  expect(api.status).toBe(400);
  expect(((await api.json()) as { message: string }).message).toContain("pruning to none would delete every applied record");
  expect(await automationNames()).toEqual(["Kept"]);
});

test("a .json file is read as JSON: a trailing comma or YAML in it is refused at its line; valid JSON applies", async () => {
  const dir = folder({
    "comma.json": '{\n  "name": "Comma",\n  "kind": "http",\n  "steps": [{ "request": { "url": "http://127.0.0.1:9/" } },],\n}\n',
    "yaml.json": automation("Yaml in json"),
    "ok.json": JSON.stringify({ name: "Json", kind: "http", steps: [{ request: { url: "http://127.0.0.1:9/" } }] }, null, 2),
    "g.yaml": "type: group\nname: g\nautomations: [comma.json, yaml.json, ok.json]\n",
  });
  const r = await cli.run(["apply", dir, "--dry-run"]);
  expect(r.code).toBe(2);
  // The two bad files, and no second problem for the group naming them.
  expect(r.stderr.split("\n").filter((l) => l.startsWith("  "))).toEqual([
    '  comma.json:4: not valid JSON: expected a value, found "]" (a comma before ] is not JSON)',
    '  yaml.json:1: not valid JSON: expected a value (an object, a list, a string in double quotes, a number, true, false or null), found "n"',
  ]);
  const good = folder({ "ok.json": JSON.stringify({ name: "Json", kind: "http", steps: [{ request: { url: "http://127.0.0.1:9/" } }] }) });
  const applied = await cli.run(["apply", good, "--dry-run"]);
  expect(applied.stderr).toBe("");
  expect(applied.stdout).toContain("+ create automation ok.json (Json)");
});

test("a group's missing members are all told, and a file with two YAML documents is told it holds one", async () => {
  const dir = folder({
    "a.yaml": automation("Member"),
    "g.yaml": "type: group\nname: g\nautomations:\n  - missing-one.yaml\n  - a.yaml\n  - missing-two.yaml\n",
    "two.yaml": `${automation("First")}---\n${automation("Second")}`,
  });
  const r = await cli.run(["apply", dir, "--dry-run"]);
  expect(r.code).toBe(2);
  expect(r.stderr.split("\n").filter((l) => l.startsWith("  "))).toEqual([
    "  two.yaml:5: a file holds one document: this one has another after `---`; put each in a file of its own",
    '  g.yaml:4: automations.0: no automation has the key "missing-one.yaml"',
    '  g.yaml:6: automations.2: no automation has the key "missing-two.yaml"',
  ]);
  expect(r.stderr).not.toContain("parseAllDocuments");
});
