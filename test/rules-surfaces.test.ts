// One rule in the core for what people type, whichever surface they type it on: a password of at least 10
// characters, an email address and a slug are checked the same by the web routes, the operations API and
// `svc admin create-user`; a key's name and expiry by the web application and `svc admin create-key` alike.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { WebClient } from "./helpers/browser";
import { databaseEnv, startTestServer, tempDir, type TestServer } from "./helpers/server";

// `svc admin` is started from source several times; on a busy machine that outgrows the 5 s default.
setDefaultTimeout(60_000);

const MAIN = join(import.meta.dir, "..", "src", "main.ts");
const dataDir = tempDir("svc-rules-");
let s: TestServer;

async function admin(args: string[], stdin?: string, command = "create-user"): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([process.execPath, MAIN, "admin", command, "--data-dir", dataDir, ...args], {
    stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, SVC_BASE_URL: "https://svc.example.test", ...(await databaseEnv(dataDir)) },
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

beforeAll(async () => {
  // An account with a password-setup link, made before the server opens the same data directory.
  const made = await admin(["--email", "ops@acme.test", "--name", "Ops", "--workspace", "acme"]);
  expect(made.code).toBe(0);
  s = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false } });
  setupToken = new URL(/password-setup link[^:]*: (\S+)/.exec(made.stdout)?.[1] ?? "https://x/").searchParams.get("token") ?? "";
});
afterAll(() => s.stop());

let setupToken = "";

test("a password needs 10 characters on the web and in svc admin alike", async () => {
  const web = await fetch(`${s.url}/api/v1/web/setup-password`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token: setupToken, password: "ninechars" }),
  });
  expect(web.status).toBe(400);
  expect(await web.json()).toMatchObject({
    error: "invalid_request",
    details: [{ path: "body.password", message: "the password needs at least 10 characters" }],
  });

  const short = await admin(["--email", "nine@acme.test", "--name", "Nine", "--workspace", "acme", "--password-stdin"], "ninechars\n");
  expect({ code: short.code, stderr: short.stderr }).toEqual({ code: 2, stderr: "svc: --password-stdin: the password needs at least 10 characters\n" });
  const long = await admin(["--email", "ten@acme.test", "--name", "Ten", "--workspace", "acme", "--password-stdin"], "tenletters\n");
  expect(long.code).toBe(0);
});

test("an email address is checked the same over the API and in svc admin", async () => {
  const api = await s.call("POST", "/members", { email: "ops@localhost", name: "Local" }, (await s.userWithKey("boss@acme.test", "acme")).key);
  expect(api.status).toBe(400);
  expect(await api.json()).toMatchObject({ error: "invalid_request", details: [{ path: "body.email" }] });

  const cli = await admin(["--email", "ops@localhost", "--name", "Local", "--workspace", "acme"]);
  expect({ code: cli.code, stderr: cli.stderr }).toEqual({ code: 2, stderr: 'svc: --email: "ops@localhost" is not an email address\n' });
});

test("a workspace slug in svc admin follows the rule of a project's slug over the API", async () => {
  const key = (await s.userWithKey("lead@acme.test", "acme")).key;
  const api = await s.call("POST", "/projects", { name: "Shop", slug: "-shop" }, key);
  expect(api.status).toBe(400);
  const apiMessage = ((await api.json()) as { details: { message: string }[] }).details[0]?.message ?? "";
  expect(apiMessage).toBe("lowercase letters, digits and dashes, starting with a letter or digit");

  const cli = await admin(["--email", "dash@acme.test", "--name", "Dash", "--workspace", "-shop"]);
  expect(cli.code).toBe(2);
  expect(cli.stderr).toContain(apiMessage);

  // Surrounding spaces are trimmed by both, as a slug typed into a form is.
  expect((await s.call("POST", "/projects", { name: "Spaced", slug: " spaced " }, key)).status).toBe(201);
  const spaced = await admin(["--email", "space@acme.test", "--name", "Space", "--workspace", " spaced "]);
  expect(spaced.code).toBe(0);
  expect(spaced.stdout).toContain("of workspace spaced");
});

test("a key's name follows create_key's rule in svc admin create-key as on the web", async () => {
  await s.userWithKey("keys@acme.test", "acme", "member");
  const web = new WebClient(s.url);
  expect((await web.signIn("keys@acme.test", "correct horse battery")).status).toBe(200);
  const long = "k".repeat(201);
  const refused = await web.send("POST", "/api/v1/ops/keys", { name: long });
  expect(refused.status).toBe(400);
  const message = ((await refused.json()) as { details: { path: string; message: string }[] }).details[0];
  expect(message?.path).toBe("body.name");

  const cli = await admin(["--email", "keys@acme.test", "--workspace", "acme", "--name", long], undefined, "create-key");
  expect({ code: cli.code, stdout: cli.stdout, stderr: cli.stderr }).toEqual({ code: 2, stdout: "", stderr: `svc: --name: ${message?.message}\n` });
  const blank = await admin(["--email", "keys@acme.test", "--workspace", "acme", "--name", "   "], undefined, "create-key");
  expect({ code: blank.code, stdout: blank.stdout }).toEqual({ code: 2, stdout: "" });
  expect(blank.stderr).toStartWith("svc: --name: ");
  const fine = await admin(["--email", "keys@acme.test", "--workspace", "acme", "--name", "laptop"], undefined, "create-key");
  expect(fine.code).toBe(0);
  expect(fine.stdout).toMatch(/^svc_[0-9A-Za-z]{43}\n$/);
});
