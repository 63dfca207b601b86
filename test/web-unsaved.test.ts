// In headless Chromium against a real server: "Generate" uses what is on screen (unsaved Gherkin is saved first,
// with If-Match, then generated from), and leaving a page with unsaved edits asks first — a link inside the app
// (staying keeps the page and its edits) and closing or reloading the tab (beforeunload).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Dialog } from "playwright-core";
import { createFeature } from "./helpers/gen-flow";
import { launchBrowser, newPage, signInAsOwner, watch } from "./helpers/browser";
import { createAutomation, json } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(90_000);

let s: TestServer;
let browser: Browser;

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  browser = await launchBrowser();
  expect((await s.call("POST", "/projects", { name: "Unsaved", slug: "unsaved" })).status).toBe(201);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const GHERKIN = `Feature: Health\n  Scenario: the service answers\n    When I send GET "http://127.0.0.1:9/health"\n    Then the response status should be 200\n`;

test("Generate with unsaved Gherkin on screen saves it first and generates from it", async () => {
  const feature = await createFeature(s, "unsaved", { name: "Typed, not saved", acceptance_criteria: "" });
  const { page } = await newPage(browser);
  watch(page);
  await signInAsOwner(page, s.url);
  await page.goto(`${s.url}/#/p/unsaved/features/${feature}`);
  await page.getByLabel("Acceptance criteria").fill(GHERKIN);
  await page.getByLabel("Strategy").selectOption("gherkin");
  await page.getByRole("button", { name: "Generate automations" }).click();
  await page.getByTestId("generation").getByText("succeeded").waitFor({ timeout: 30_000 });
  const stored = await json<{ acceptance_criteria: string }>(await s.call("GET", `/projects/unsaved/features/${feature}`));
  expect(stored.acceptance_criteria).toBe(GHERKIN);
  const drafts = await json<{ data: { name: string }[] }>(await s.call("GET", `/projects/unsaved/automations?feature=${feature}`));
  expect(drafts.data.map((d) => d.name).join(" ")).toContain("the service answers");
});

test("Generate refuses with a clear message when the edits on screen cannot be saved (changed elsewhere)", async () => {
  const feature = await createFeature(s, "unsaved", { name: "Changed elsewhere", acceptance_criteria: "" });
  const { page } = await newPage(browser);
  watch(page);
  await signInAsOwner(page, s.url);
  await page.goto(`${s.url}/#/p/unsaved/features/${feature}`);
  await page.getByLabel("Acceptance criteria").waitFor();
  expect((await s.call("PATCH", `/projects/unsaved/features/${feature}`, { description: "from elsewhere" })).status).toBe(200);
  await page.getByLabel("Acceptance criteria").fill(GHERKIN);
  await page.getByRole("button", { name: "Generate automations" }).click();
  await page.getByText("could not be saved (see the form above), so generation was not started").waitFor();
  await page.getByRole("alertdialog").getByText("This feature was changed by someone else").waitFor();
  // No generation was started, and the stored text is the other change's, not the edits on screen.
  expect((await s.call("GET", `/projects/unsaved/features/${feature}/generation`)).status).toBe(404);
  expect((await json<{ acceptance_criteria: string }>(await s.call("GET", `/projects/unsaved/features/${feature}`))).acceptance_criteria).toBe("");
});

test("leaving an automation with unsaved edits asks first: staying keeps them, leaving leaves; reloading asks too", async () => {
  const id = await createAutomation(s, "unsaved", { name: "half edited", kind: "http", steps: [{ request: { url: "http://127.0.0.1:9/" } }] });
  const { page } = await newPage(browser);
  watch(page);
  await signInAsOwner(page, s.url);
  await page.goto(`${s.url}/#/p/unsaved/automations/${id}`);
  const description = page.getByLabel("Description");
  await description.click();
  await description.fill("not saved yet");

  const questions: string[] = [];
  page.once("dialog", (d: Dialog) => {
    questions.push(`${d.type()}: ${d.message()}`);
    void d.dismiss();
  });
  await page.getByRole("link", { name: "Runs", exact: true }).click();
  for (let i = 0; i < 100 && questions.length === 0; i++) await Bun.sleep(50);
  expect(questions).toEqual(["confirm: This page has edits that are not saved. Leave it and lose them?"]);
  expect(page.url()).toContain(`/automations/${id}`);
  expect(await description.inputValue()).toBe("not saved yet");

  // Leaving by reloading the tab asks the browser's question.
  page.once("dialog", (d: Dialog) => {
    questions.push(d.type());
    void d.dismiss();
  });
  await page.close({ runBeforeUnload: true });
  for (let i = 0; i < 100 && questions.length < 2; i++) await Bun.sleep(50);
  expect(questions[1]).toBe("beforeunload");
});

test("saying yes leaves; a page without edits is left without a question", async () => {
  const id = await createAutomation(s, "unsaved", { name: "left anyway", kind: "http", steps: [{ request: { url: "http://127.0.0.1:9/" } }] });
  const { page } = await newPage(browser);
  watch(page);
  await signInAsOwner(page, s.url);
  const asked: string[] = [];
  page.on("dialog", (d: Dialog) => {
    asked.push(d.message());
    void d.accept();
  });
  await page.goto(`${s.url}/#/p/unsaved/automations/${id}`);
  await page.getByLabel("Description").waitFor();
  await page.getByRole("link", { name: "Runs", exact: true }).click();
  await page.waitForURL(/#\/p\/unsaved\/runs$/);
  expect(asked).toEqual([]);
  await page.goto(`${s.url}/#/p/unsaved/automations/${id}`);
  await page.getByLabel("Description").fill("dropped");
  await page.getByRole("link", { name: "Runs", exact: true }).click();
  // The address changes at the click; the question comes with the hashchange event just after it.
  await page.waitForURL(/#\/p\/unsaved\/runs$/);
  await page.getByRole("heading", { level: 1, name: "Runs" }).waitFor();
  expect(asked).toEqual(["This page has edits that are not saved. Leave it and lose them?"]);
});

test("quarantining, disabling or activating an automation keeps the edits on screen, and they save from the new version", async () => {
  const id = await createAutomation(s, "unsaved", { name: "edited, then quarantined", kind: "http", steps: [{ request: { url: "http://127.0.0.1:9/" } }] });
  const { page } = await newPage(browser);
  watch(page);
  await signInAsOwner(page, s.url);
  await page.goto(`${s.url}/#/p/unsaved/automations/${id}`);
  const description = page.getByLabel("Description");
  await description.fill("typed before the quarantine");
  await page.getByRole("button", { name: "Quarantine" }).click();
  await page.getByRole("button", { name: "End quarantine" }).waitFor();
  await page.getByRole("button", { name: "Disable" }).click();
  await page.getByRole("button", { name: "Activate" }).waitFor();
  expect(await description.inputValue()).toBe("typed before the quarantine");
  const saved = page.waitForResponse(
    (r) => r.request().method() === "PATCH" && r.url().endsWith(`/automations/${id}`) && r.request().postData()?.includes("steps") === true,
  );
  await page.getByRole("button", { name: "Save automation" }).click();
  expect((await saved).status()).toBe(200);
  // Saved, not refused as changed by someone else: the changes were this page's own.
  expect(await page.getByRole("alertdialog").count()).toBe(0);
  const stored = await json<{ description: string; quarantined: boolean; status: string }>(await s.call("GET", `/projects/unsaved/automations/${id}`));
  expect(stored).toMatchObject({ description: "typed before the quarantine", quarantined: true, status: "disabled" });
});

test("removing a secret keeps the edits on screen of its environment", async () => {
  const env = await json<{ id: string }>(
    await s.call("POST", "/projects/unsaved/environments", {
      name: "with a secret",
      variables: { BASE_URL: "http://127.0.0.1:9" },
      secrets: { TOKEN: "a-long-enough-secret" },
    }),
    201,
  );
  const { page } = await newPage(browser);
  watch(page);
  await signInAsOwner(page, s.url);
  page.on("dialog", (d: Dialog) => void d.dismiss());
  await page.goto(`${s.url}/#/p/unsaved/environments`);
  const variables = page.getByLabel("Variables");
  await variables.fill("BASE_URL=http://127.0.0.1:9\nREGION=eu");
  await page.getByRole("button", { name: "Remove secret TOKEN" }).click();
  await page.getByRole("button", { name: "Yes, remove" }).click();
  await page.getByText("Secrets: none").waitFor();
  expect(await variables.inputValue()).toBe("BASE_URL=http://127.0.0.1:9\nREGION=eu");
  await page.getByRole("button", { name: "Save environment" }).click();
  await page.waitForFunction(
    async (url) => ((await (await fetch(url)).json()) as { variables: Record<string, string> }).variables.REGION === "eu",
    `${s.url}/api/v1/ops/projects/unsaved/environments/${env.id}`,
  );
  const stored = await json<{ variables: Record<string, string>; secret_names: string[] }>(await s.call("GET", `/projects/unsaved/environments/${env.id}`));
  expect(stored).toMatchObject({ variables: { BASE_URL: "http://127.0.0.1:9", REGION: "eu" }, secret_names: [] });
});
