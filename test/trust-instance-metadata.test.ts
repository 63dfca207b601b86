// Member-written tests never reach the cloud's instance metadata (169.254.169.254 and the link-local ranges), where
// the machine svc runs on hands out its own credentials: an http step's URL, a BASE_URL, a redirect, a browser's
// goto, a page's redirect and a page's own requests are all refused, and the step says why. Other hosts, loopback
// included, are reached as before.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { projectWithEnv, type RunRecord, runToEnd } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

// A browser run starts Chromium: seconds on a busy machine.
setDefaultTimeout(120_000);

const METADATA = "http://169.254.169.254/latest/meta-data/iam/security-credentials/";
const REASON = "is in the cloud's instance metadata range (link-local), which hands out the credentials of the machine svc runs on";

let s: TestServer;
let target: ReturnType<typeof Bun.serve>;
let project: string;
let metadataBase: string;

beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const u = new URL(req.url);
      if (u.pathname === "/to") return new Response(null, { status: 302, headers: { location: u.searchParams.get("location") ?? "/" } });
      if (u.pathname === "/page-asks")
        return new Response(`<!doctype html><title>asks</title><p>a page</p><img src="${METADATA}role"><p id="done">loaded</p>`, {
          headers: { "content-type": "text/html" },
        });
      if (u.pathname === "/page") return new Response("<!doctype html><title>ok</title><p>a plain page</p>", { headers: { "content-type": "text/html" } });
      return Response.json({ ok: true });
    },
  });
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project } = await projectWithEnv(s, "metadata", { BASE_URL: `http://127.0.0.1:${target.port}` }));
  ({ project: metadataBase } = await projectWithEnv(s, "metadata base", { BASE_URL: "http://169.254.169.254" }));
});
afterAll(async () => {
  await s.stop();
  target.stop(true);
});

const http = (steps: unknown[]) => ({ name: `m-${crypto.randomUUID().slice(0, 8)}`, kind: "http", environment: "test", steps });
const browser = (steps: unknown[]) => ({ name: `m-${crypto.randomUUID().slice(0, 8)}`, kind: "browser", environment: "test", steps });

function refused(run: RunRecord, message: string | RegExp): void {
  expect(run.status).toBe("error");
  expect(run.steps[0]?.status).toBe("error");
  if (typeof message === "string") expect(run.steps[0]?.message).toBe(message);
  else expect(run.steps[0]?.message).toMatch(message);
  expect(run.steps[0]?.response).toBeUndefined();
}

describe("http steps", () => {
  test("the metadata's addresses are refused in every spelling, before anything is sent", async () => {
    const spellings: [string, string][] = [
      [METADATA, "169.254.169.254"],
      ["http://2852039166/latest/meta-data/", "169.254.169.254"],
      ["http://0xa9.0xfe.0xa9.0xfe/latest/meta-data/", "169.254.169.254"],
      ["http://[::ffff:169.254.169.254]/latest/meta-data/", "::ffff:a9fe:a9fe"],
      ["http://[fd00:ec2::254]/latest/meta-data/", "fd00:ec2::254"],
      ["http://169.254.170.2/v2/credentials/x", "169.254.170.2"],
      ["http://100.100.100.200/latest/meta-data/", "100.100.100.200"],
    ];
    for (const [url, address] of spellings) {
      const run = await runToEnd(s, project, http([{ request: { method: "PUT", url, headers: { "X-aws-ec2-metadata-token-ttl-seconds": "21600" } } }]));
      const shown = new URL(url).href;
      refused(run, `svc will not request ${shown}: ${address} ${REASON}`);
    }
  });

  test("a BASE_URL pointing there is refused at run time", async () => {
    const run = await runToEnd(s, metadataBase, http([{ request: { url: "/latest/meta-data/iam/security-credentials/" } }]));
    refused(run, `svc will not request ${METADATA}: 169.254.169.254 ${REASON}`);
  });

  test("a redirect there is not followed, and the step says so", async () => {
    const run = await runToEnd(s, project, http([{ request: { url: `/to?location=${encodeURIComponent(METADATA)}` }, expect: [{ status: 200 }] }]));
    refused(run, `the response redirected to ${METADATA}, which svc will not follow: 169.254.169.254 ${REASON}`);
  });

  test("other hosts, loopback by address and by name, are reached as before", async () => {
    const byAddress = await runToEnd(s, project, http([{ request: { url: "/json" }, expect: [{ status: 200 }] }]));
    expect(byAddress.status).toBe("passed");
    const byName = await runToEnd(s, project, http([{ request: { url: `http://localhost:${target.port}/json` }, expect: [{ status: 200 }] }]));
    expect(byName.status).toBe("passed");
  });
});

describe("browser steps", () => {
  test("a goto there is refused before the page opens", async () => {
    const run = await runToEnd(s, project, browser([{ goto: METADATA }]));
    refused(run, `goto: svc will not open ${METADATA}: 169.254.169.254 ${REASON}`);
  });

  test("a page's redirect there is blanked, and the step errs saying what was blocked", async () => {
    const run = await runToEnd(s, project, browser([{ goto: `/to?location=${encodeURIComponent(METADATA)}` }, { expect: { text: "anything" } }]));
    expect(run.status).toBe("error");
    expect(run.steps[0]?.status).toBe("error");
    expect(run.steps[0]?.message).toContain(`the page tried to reach ${METADATA}, which was blocked: 169.254.169.254 ${REASON}`);
    expect(run.steps[1]?.status).toBe("skipped");
  });

  test("a page's own request there is stopped, and the step errs saying so", async () => {
    const run = await runToEnd(s, project, browser([{ goto: "/page-asks" }]));
    expect(run.status).toBe("error");
    expect(run.steps[0]?.message).toBe(`the page tried to reach ${METADATA}role, which was blocked: 169.254.169.254 ${REASON}`);
  });

  test("a page elsewhere opens as before", async () => {
    const run = await runToEnd(s, project, browser([{ goto: "/page" }, { expect: { text: "a plain page" } }]));
    expect(run.status).toBe("passed");
  });
});
