// Crawl generation through the real server against a local HTML app: pages, headings, forms and links read with
// a real HTML parser become browser and http smoke drafts; the page limit and unreachable pages.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTargetApp, type TargetApp } from "./helpers/gen-target-app";
import { automationsOf, createFeature, createProject, generate } from "./helpers/gen-flow";
import { startTestServer, type TestServer } from "./helpers/server";
import type { Step } from "../src/manifest/automation-format";
import { stepLabel } from "../src/manifest/step-labels";

let t: TestServer;
let app: TargetApp;
let project: string;

beforeAll(async () => {
  app = startTargetApp();
  t = await startTestServer({ generation: { crawl_max_pages: 5 } });
  project = await createProject(t, "shop-web");
});
afterAll(async () => {
  await t.stop();
  await app.stop();
});

describe("crawl generation", () => {
  test("the home page and the same-origin pages it links to → page, form and link smoke tests", async () => {
    const feature = await createFeature(t, project, { name: "Web shop", target: { kind: "web", url: `${app.url}/` } });
    const g = await generate(t, project, feature);
    expect(g.status).toBe("succeeded");
    expect(g.warnings).toEqual([]);
    expect(g.result).toContain("crawl: 7");
    const autos = await automationsOf(t, project, g);
    expect(autos.map((a) => a.name)).toEqual([
      'Page / loads with its title "Acme Shop"',
      "Links on / answer 2xx",
      'Page /login loads with its title "Sign in - Acme"',
      "Form on /login has its fields",
      "Links on /login answer 2xx",
      'Page /about loads with its title "About Acme"',
      "Form on /about has its fields",
    ]);
    const [home, homeLinks, , loginForm, loginLinks, about, aboutForm] = autos;
    expect(home?.kind).toBe("browser");
    expect(home?.steps).toEqual([
      { goto: `${app.url}/` },
      { expect: { title: "Acme Shop" } },
      { expect: { visible: 'role=heading[name="Acme Shop"s]' } },
      { expect: { visible: 'role=heading[name="Featured items"s]' } },
    ]);
    // Same-origin only, each once, without fragments; mailto and other origins are left out.
    expect(homeLinks?.kind).toBe("http");
    expect(homeLinks?.steps.map((s) => (s.request as { url: string }).url)).toEqual([`${app.url}/login`, `${app.url}/about`]);
    expect(loginLinks?.steps.map((s) => (s.request as { url: string }).url)).toEqual([`${app.url}/`]);
    expect(loginForm?.steps.slice(1)).toEqual([{ expect: { visible: 'label="Email"' } }, { expect: { visible: 'label="Password"' } }]);
    // A field without a label is found by its placeholder, else by its name.
    expect(aboutForm?.steps.slice(1)).toEqual([{ expect: { visible: 'placeholder="Search"' } }, { expect: { visible: 'css=select[name="sort"]' } }]);
    // Public locator forms of the step format only, and step labels as a person reads them.
    expect(JSON.stringify(autos.map((a) => a.steps))).not.toContain("internal:");
    const labels = autos.flatMap((a) => (a.kind === "browser" ? a.steps.map((s) => stepLabel(s as Step)) : []));
    expect(labels.filter((l) => l.includes("internal:") || l.includes("role=") || l.includes("label="))).toEqual([]);
    expect(home?.steps.map((s) => stepLabel(s as Step))).toEqual([
      `goto ${app.url}/`,
      'expect title "Acme Shop"',
      'expect visible heading "Acme Shop"',
      'expect visible heading "Featured items"',
    ]);
    expect(loginForm?.steps.slice(1).map((s) => stepLabel(s as Step))).toEqual(['expect visible "Email"', 'expect visible "Password"']);
    expect(aboutForm?.steps.slice(1).map((s) => stepLabel(s as Step))).toEqual(['expect visible placeholder "Search"', 'expect visible select[name="sort"]']);
    expect(about?.steps).toContainEqual({ expect: { visible: 'role=heading[name="Our team"s]' } });
    expect(g.progress).toEqual({ stage: "done", done: 7, total: 7 });
  });

  test("crawl_max_pages bounds the pages read", async () => {
    const small = await startTestServer({ generation: { crawl_max_pages: 1 } });
    try {
      const p = await createProject(small, "one-page");
      const feature = await createFeature(small, p, { name: "Home", target: { kind: "web", url: `${app.url}/` } });
      const g = await generate(small, p, feature, "crawl");
      const autos = await automationsOf(small, p, g);
      expect(autos.map((a) => a.name)).toEqual(['Page / loads with its title "Acme Shop"', "Links on / answer 2xx"]);
    } finally {
      await small.stop();
    }
  });

  test("an unreachable or non-HTML page fails the job with a clear error", async () => {
    const gone = await createFeature(t, project, { name: "Gone", target: { kind: "web", url: `${app.url}/missing` } });
    const g = await generate(t, project, gone, "crawl");
    expect(g.status).toBe("failed");
    expect(g.error).toBe(`could not read the feature's page ${app.url}/missing: it answered HTTP 404`);
    const json = await createFeature(t, project, { name: "JSON", target: { kind: "web", url: `${app.url}/api/items` } });
    const g2 = await generate(t, project, json, "crawl");
    expect(g2.error).toContain("it is not an HTML page (content-type application/json");
    const relative = await createFeature(t, project, { name: "Relative", target: { kind: "web", url: "/login" } });
    const g3 = await generate(t, project, relative, "crawl");
    expect(g3.error).toBe('the crawl strategy cannot run: the feature\'s URL "/login" is not an absolute http(s) URL');
  });

  test("the cloud's instance metadata is never crawled: not as the feature's page, not at the end of a redirect", async () => {
    const reason = "169.254.169.254 is in the cloud's instance metadata range (link-local), which hands out the credentials of the machine svc runs on";
    const direct = await createFeature(t, project, { name: "Metadata", target: { kind: "web", url: "http://169.254.169.254/latest/meta-data/" } });
    const g = await generate(t, project, direct, "crawl");
    expect(g.status).toBe("failed");
    expect(g.error).toBe(`could not read the feature's page http://169.254.169.254/latest/meta-data/: ${reason}`);
    const site = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => new Response(null, { status: 302, headers: { location: "http://169.254.169.254/latest/meta-data/" } }),
    });
    try {
      const redirected = await createFeature(t, project, { name: "Metadata by redirect", target: { kind: "web", url: `http://127.0.0.1:${site.port}/` } });
      const g2 = await generate(t, project, redirected, "crawl");
      expect(g2.status).toBe("failed");
      expect(g2.error).toBe(
        `could not read the feature's page http://127.0.0.1:${site.port}/: it redirected to http://169.254.169.254/latest/meta-data/: ${reason}`,
      );
    } finally {
      await site.stop(true);
    }
  });

  test("a page that inflates past 5 MiB (a gzip bomb) is not read to its end: the job fails saying so", async () => {
    // 64 MiB of spaces in 64 KiB of gzip: read whole, the server would hold all of it.
    const bomb = Bun.gzipSync(new Uint8Array(64 * 1024 * 1024).fill(32));
    const site = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => new Response(bomb, { headers: { "content-type": "text/html", "content-encoding": "gzip" } }),
    });
    try {
      const feature = await createFeature(t, project, { name: "Bomb", target: { kind: "web", url: `http://127.0.0.1:${site.port}/` } });
      const g = await generate(t, project, feature, "crawl");
      expect(g.status).toBe("failed");
      expect(g.error).toBe(`could not read the feature's page http://127.0.0.1:${site.port}/: the page is larger than 5 MiB (svc stopped reading it)`);
    } finally {
      await site.stop(true);
    }
  });
});
