// In headless Chromium against a real server: the steps editor is a code editor (CodeMirror) with line numbers, Tab
// to indent, completion of the fields the automation format allows where the cursor is, JSON and YAML; a mistake is
// marked at the line of the field it names, with the server's precise message.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, newPage, replaceEditorText, signInAsOwner, watch } from "./helpers/browser";
import { createAutomation, json } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

let s: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  browser = await launchBrowser();
  page = (await newPage(browser)).page;
  page.setDefaultTimeout(20_000);
  watch(page);
  // Each test leaves its edits unsaved: moving on to the next automation says yes to leaving them.
  page.on("dialog", (d) => void d.accept());
  await signInAsOwner(page, s.url);
  expect((await s.call("POST", "/projects", { name: "Editor", slug: "editor" })).status).toBe(201);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

/** The 1-based line of the editor holding the first inline error mark. */
const markedLine = (p: Page) =>
  p.evaluate(() => {
    const mark = document.querySelector(".cm-lintRange-error");
    const line = mark?.closest(".cm-line");
    return line ? [...document.querySelectorAll(".cm-content > .cm-line")].indexOf(line) + 1 : 0;
  });

const STEPS = (action: string) => `[\n  {\n    "goto": "https://shop.example.com/"\n  },\n  {\n    "${action}": "text=Sign in"\n  }\n]`;

async function openEditor(kind: "http" | "browser", steps: unknown[]): Promise<string> {
  const id = await createAutomation(s, "editor", { name: `edited ${Math.random()}`, kind, steps });
  await page.goto(`${s.url}/#/p/editor/automations/${id}`);
  await page.waitForURL((u) => u.hash.endsWith(id));
  await page.locator(".cm-editor").waitFor();
  return id;
}

const editor = () => page.getByRole("textbox", { name: "Steps", exact: true });

/** Replaces the editor's text as pasting does (select all, then a paste of the text), and waits for it. */
const replaceText = (text: string) => replaceEditorText(page, editor(), text);

test("a misspelt action is marked at its line with the server's message; fixing it makes the steps valid", async () => {
  await openEditor("browser", [{ goto: "https://shop.example.com/" }]);
  expect(await page.locator(".cm-lineNumbers .cm-gutterElement").count()).toBeGreaterThan(1);
  await replaceText(STEPS("clik"));
  await page.getByTestId("steps-problems").waitFor();
  const problems = await page.getByTestId("steps-problems").innerText();
  expect(problems).toContain('steps.1 unknown field "clik" (did you mean "click"?)');
  await page.locator(".cm-lintRange-error").first().waitFor({ state: "attached" });
  // At the misspelt key itself, not over the whole step.
  expect(await markedLine(page)).toBe(6);
  expect(await page.getByRole("button", { name: "Save automation" }).isDisabled()).toBe(true);
  await replaceText(STEPS("click"));
  await page.getByTestId("steps-valid").waitFor();
});

test("a syntax error is marked where the parser stopped, in JSON and in YAML, not on line 1", async () => {
  await openEditor("http", [{ request: { url: "https://shop.example.com/" } }]);
  // Line 6 lacks the comma after its element.
  await replaceText(
    `[\n  {\n    "request": { "url": "https://shop.example.com/a" }\n  },\n  {\n    "request": { "url": "https://shop.example.com/b" } }\n  {\n    "request": { "url": "https://shop.example.com/c" }\n  }\n]`,
  );
  await page.getByTestId("steps-problems").getByText("(JSON)").waitFor();
  await page.locator(".cm-lintRange-error").first().waitFor({ state: "attached" });
  expect(await markedLine(page)).toBeGreaterThanOrEqual(6);
  await replaceText(`[\n  {\n    "request": { "url": "https://shop.example.com/" }\n  }\n]`);
  await page.getByTestId("steps-valid").waitFor();
  await page.getByRole("radio", { name: "YAML" }).check();
  await replaceText("- request:\n    url: https://shop.example.com/\n- request:\n    url: https://shop.example.com/b\n   expect: [ }\n");
  await page.getByTestId("steps-problems").getByText("(YAML)").waitFor();
  await page.locator(".cm-lintRange-error").first().waitFor({ state: "attached" });
  expect(await markedLine(page)).toBeGreaterThanOrEqual(4);
  expect(await page.getByTestId("steps-problems").innerText()).not.toMatch(/:\s*$/);
});

test("a request without url and a status given as a string are marked at their lines", async () => {
  await openEditor("http", [{ request: { url: "https://shop.example.com/" } }]);
  await replaceText(`[\n  {\n    "request": {\n      "method": "GET"\n    }\n  }\n]`);
  await page.getByTestId("steps-problems").getByText("steps.0.request.url required (string)").waitFor();
  await page.locator(".cm-lintRange-error").first().waitFor({ state: "attached" });
  expect(await markedLine(page)).toBe(3);
  await replaceText(`[\n  {\n    "request": { "url": "https://shop.example.com/" },\n    "expect": [\n      { "status": "200" }\n    ]\n  }\n]`);
  await page.getByTestId("steps-problems").getByText("steps.0.expect.0.status expected number or object, not string").waitFor();
  await page.waitForFunction(() => document.querySelector(".cm-lintRange-error")?.closest(".cm-line")?.textContent?.includes('"status"'));
  expect(await markedLine(page)).toBe(5);
});

test("Tab indents, completion offers the fields of a step, YAML shows the same steps and saves them", async () => {
  const id = await openEditor("browser", [{ goto: "https://shop.example.com/" }]);
  await replaceText("[\n{");
  await page.keyboard.press("End");
  await page.keyboard.press("Tab");
  await page.waitForFunction(() => document.querySelector(".cm-content")?.textContent === "[  {");
  // Inside an empty step, completion offers the fields a step may have.
  await replaceText("[{}]");
  await page.keyboard.press("Control+End");
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("Control+Space");
  await page.locator(".cm-tooltip-autocomplete li", { hasText: "click" }).first().waitFor({ state: "attached" });
  expect(await page.locator(".cm-tooltip-autocomplete li").allInnerTexts()).toEqual(expect.arrayContaining(["request", "goto", "fill", "screenshot"]));
  await replaceText('[{"click": "text=Go"}]');
  await page.getByTestId("steps-valid").waitFor();
  expect(JSON.parse(await editor().innerText())).toEqual([{ click: "text=Go" }]);

  await page.getByRole("radio", { name: "YAML" }).check();
  await page.waitForFunction(() => document.querySelector(".cm-content")?.textContent?.includes("- click: text=Go"));
  await replaceText("- goto: https://shop.example.com/\n- click: text=Sign in\n");
  await page.getByTestId("steps-valid").getByText("2 valid steps").waitFor();
  const saved = page.waitForResponse((r) => r.request().method() === "PATCH" && r.url().includes("/automations/"));
  await page.getByRole("button", { name: "Save automation" }).click();
  const answer = await saved;
  expect(answer.status()).toBe(200);
  expect(JSON.parse(answer.request().postData() ?? "{}").steps).toEqual([{ goto: "https://shop.example.com/" }, { click: "text=Sign in" }]);
  const stored = await json<{ steps: unknown[] }>(await s.call("GET", `/projects/editor/automations/${id}`));
  expect(stored.steps).toEqual([{ goto: "https://shop.example.com/" }, { click: "text=Sign in" }]);
});

test("completion: typing the start of a field name (with its quote or without) and pressing Enter writes the whole name", async () => {
  await openEditor("browser", [{ goto: "https://shop.example.com/" }]);
  for (const typed of ['"scre', "scre"]) {
    await replaceText("[{}]");
    await page.keyboard.press("Control+End");
    await page.keyboard.press("ArrowLeft");
    await page.keyboard.press("ArrowLeft");
    // Typed at once, as a person types: each key lands where the last one left the cursor, and the list stays open.
    await page.keyboard.type(typed);
    await page.locator(".cm-tooltip-autocomplete li[aria-selected='true']", { hasText: "screenshot" }).waitFor();
    // CodeMirror takes no key for the list until its interactionDelay (75 ms) has passed since the list last changed.
    await page.waitForTimeout(150);
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelector(".cm-content")?.textContent?.startsWith('[{"screenshot": '));
    expect(await editor().innerText()).toBe('[{"screenshot": }]');
  }
});
