// The assistant panel in Chromium, against a scripted OpenAI-compatible model: ask, see the held action, Confirm
// it (a run with trigger assistant); the answer's words show as they arrive; on a server without a model, the panel
// says how to configure one.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser } from "playwright-core";
import { explained, launchBrowser, newPage, shot, signInAsOwner } from "./helpers/browser";
import { json } from "./helpers/runs";
import { startScriptedModel, type ScriptedModel } from "./helpers/scripted-model";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

let model: ScriptedModel;
let s: TestServer;
let target: ReturnType<typeof Bun.serve>;
let browser: Browser;

beforeAll(async () => {
  model = startScriptedModel();
  target = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({ ok: true }) });
  s = await startTestServer({ rate_limit: { enabled: false } }, { SVC_ASSISTANT_BASE_URL: model.baseUrl, SVC_ASSISTANT_MODEL: "scripted" });
  await json(await s.call("POST", "/projects", { name: "Shop" }), 201);
  await json(await s.call("POST", "/projects/shop/environments", { name: "local", variables: { BASE_URL: `http://127.0.0.1:${target.port}` } }), 201);
  await json(
    await s.call("POST", "/projects/shop/automations", {
      name: "health",
      kind: "http",
      environment: "local",
      steps: [{ request: { url: "/health" }, expect: [{ status: 200 }] }],
    }),
    201,
  );
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser.close();
  await s.stop();
  await model.stop();
  await target.stop(true);
});

test("the panel: ask, the held action shows with Confirm, Confirm runs it", async () => {
  const { context, page } = await newPage(browser);
  await signInAsOwner(page, s.url);
  await explained(page, "assistant-panel", async () => {
    model.script({ tools: [{ name: "run_automation", arguments: { project: "shop", automation: "health" } }] }, { text: "Confirm the run, please." });
    await page.getByRole("button", { name: "Assistant" }).click();
    const panel = page.getByRole("complementary", { name: "Assistant" });
    await panel.getByLabel("Message").fill("Run the health check");
    await panel.getByRole("button", { name: "Send" }).click();
    await panel.getByText("Confirm the run, please.").waitFor();
    await panel.getByText("needs confirmation").waitFor();
    await shot(page, "assistant-held");
    await panel.getByRole("button", { name: "Confirm" }).click();
    await panel.getByText("done", { exact: true }).waitFor();
    expect(await panel.getByRole("button", { name: "Confirm" }).count()).toBe(0);
  });
  const runs = await json<{ data: { trigger: string }[] }>(await s.call("GET", "/projects/shop/runs"));
  expect(runs.data.map((r) => r.trigger)).toEqual(["assistant"]);
  await context.close();
});

test("the panel shows the answer's words as they arrive, before the model has finished, then the whole answer", async () => {
  const { context, page } = await newPage(browser);
  await signInAsOwner(page, s.url);
  await explained(page, "assistant-streaming", async () => {
    model.script({ text: "Looking at the shop project now, one moment please.", pauseAfter: 3 });
    await page.getByRole("button", { name: "Assistant" }).click();
    const panel = page.getByRole("complementary", { name: "Assistant" });
    await panel.getByLabel("Message").fill("How is the shop?");
    await panel.getByRole("button", { name: "Send" }).click();
    // The first three words are on screen while the model holds the rest of its answer back.
    await panel.getByText("Looking at the", { exact: false }).waitFor();
    expect(model.streams.finished).toBeLessThan(model.streams.begun);
    expect(await panel.getByText("one moment please").count()).toBe(0);
    await shot(page, "assistant-streaming");
    model.release();
    await panel.getByText("Assistant: Looking at the shop project now, one moment please.").waitFor();
    await panel.getByRole("button", { name: "Send" }).waitFor();
  });
  await context.close();
});

test("whoami says the assistant can answer on a server with a model", async () => {
  const me = await json<{ assistant: { available: boolean; problem: string | null } }>(await s.call("GET", "/me"), 200);
  expect(me.assistant).toEqual({ available: true, problem: null });
});

test("without a model the panel says how to configure one as it opens, and Send waits for one", async () => {
  const bare = await startTestServer();
  try {
    const { context, page } = await newPage(browser);
    await signInAsOwner(page, bare.url);
    await explained(page, "assistant-unconfigured", async () => {
      await page.getByRole("button", { name: "Assistant" }).click();
      const panel = page.getByRole("complementary", { name: "Assistant" });
      // Before anything is asked.
      await panel.getByText("No model is configured for the assistant.").waitFor();
      await panel.getByText(/SVC_ASSISTANT_BASE_URL/).waitFor();
      await panel.getByLabel("Message").fill("hello");
      expect(await panel.getByRole("button", { name: "Send" }).isDisabled()).toBe(true);
    });
    // What the panel read, for an assistant or a script too.
    const me = await json<{ assistant: { available: boolean; problem: string | null } }>(await bare.call("GET", "/me"), 200);
    expect(me.assistant.available).toBe(false);
    expect(me.assistant.problem).toContain("SVC_ASSISTANT_MODEL");
    await context.close();
  } finally {
    await bare.stop();
  }
});
