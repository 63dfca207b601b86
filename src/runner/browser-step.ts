// Executes one browser step on a page: navigation, actions, waits, expectations and screenshots.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import type { BrowserStep } from "../manifest/automation-format";
import { interpolateText, MissingVariableError } from "./interpolation";
import { locate } from "./locators";
import { resolveUrl, StepFailure, type StepContext, type StepResult } from "./step-result";

const DEFAULT_STEP_TIMEOUT_MS = 5_000;

export function browserStepName(step: BrowserStep): string {
  if (step.name) return step.name;
  if ("goto" in step) return `goto ${step.goto}`;
  if ("click" in step) return `click ${step.click}`;
  if ("fill" in step) return `fill ${step.fill.locator}`;
  if ("press" in step) return typeof step.press === "string" ? `press ${step.press}` : `press ${step.press.key}${step.press.locator ? ` in ${step.press.locator}` : ""}`;
  if ("select" in step) return `select in ${step.select.locator}`;
  if ("check" in step) return `check ${step.check}`;
  if ("uncheck" in step) return `uncheck ${step.uncheck}`;
  if ("hover" in step) return `hover ${step.hover}`;
  if ("wait_for" in step) return `wait for ${step.wait_for.locator ?? (step.wait_for.text !== undefined ? `text "${step.wait_for.text}"` : `url ${step.wait_for.url}`)}`;
  if ("expect" in step) return `expect ${Object.entries(step.expect).filter(([, v]) => v !== undefined).map(([k, v]) => `${k} ${typeof v === "string" ? `"${v}"` : JSON.stringify(v)}`).join(", ")}`;
  return `screenshot ${step.screenshot}`;
}

/** An expected URL is exact (http…), a path (/dashboard: compared with path and query), or /regex/. */
function urlMatches(actual: string, expected: string): boolean {
  const re = /^\/(.+)\/([a-z]*)$/.exec(expected);
  if (re && expected.length > 2 && !expected.startsWith("//")) {
    try {
      return new RegExp(re[1] as string, re[2]).test(actual);
    } catch {
      // Not a valid regular expression: treat it as a path.
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(expected)) return actual === expected;
  const u = new URL(actual);
  return expected.includes("?") ? `${u.pathname}${u.search}` === expected : u.pathname === expected;
}

async function poll(timeoutMs: number, signal: AbortSignal, check: () => Promise<boolean>): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (signal.aborted) throw signal.reason;
    if (await check()) return true;
    if (performance.now() >= deadline) return false;
    await Bun.sleep(50);
  }
}

/** Playwright's timeouts mean "the page did not do what the step expects": that is a failed step, not an error. */
function describe(e: unknown, what: string, timeoutMs: number): StepFailure {
  const err = e as Error;
  if (err.name === "TimeoutError") return new StepFailure("failed", `${what}: not found or not ready within ${timeoutMs} ms`);
  const first = (err.message ?? String(e)).split("\n")[0] ?? "";
  if (/ERR_CONNECTION_REFUSED|ERR_NAME_NOT_RESOLVED|ERR_CONNECTION_CLOSED|ERR_EMPTY_RESPONSE|ERR_ADDRESS_UNREACHABLE/.test(first)) {
    return new StepFailure("error", `${what}: could not reach the page (${first}): check that the site is running and that the URL and BASE_URL are right`);
  }
  return new StepFailure("failed", `${what}: ${first}`);
}

export async function screenshot(page: Page, ctx: StepContext, name: string): Promise<string> {
  mkdirSync(ctx.artifactDir, { recursive: true });
  const file = `${ctx.artifactPrefix}${name}.png`;
  await page.screenshot({ path: join(ctx.artifactDir, file), fullPage: true, timeout: 10_000 });
  return file;
}

export async function executeBrowserStep(page: Page, step: BrowserStep, index: number, ctx: StepContext): Promise<StepResult> {
  const started = performance.now();
  const name = browserStepName(step);
  // Not capped by the run's deadline: when that passes, the run's abort closes the page and wins (timed_out).
  const timeout = step.timeout_ms ?? DEFAULT_STEP_TIMEOUT_MS;
  const text = (s: string) => interpolateText(s, ctx.vars);
  const done = (artifacts?: string[]): StepResult => ({ index, name, status: "passed", duration_ms: performance.now() - started, message: null, ...(artifacts ? { artifacts } : {}) });
  try {
    if ("goto" in step) {
      const url = resolveUrl(text(step.goto), ctx.baseUrl);
      const res = await page.goto(url, { timeout, waitUntil: "load" });
      const r = done();
      r.message = res ? `HTTP ${res.status()} ${url}` : url;
      return r;
    }
    if ("click" in step) await locate(page, step.click).first().click({ timeout });
    else if ("fill" in step) await locate(page, step.fill.locator).first().fill(text(step.fill.value), { timeout });
    else if ("press" in step) {
      if (typeof step.press === "string") await page.keyboard.press(step.press);
      else if (step.press.locator) await locate(page, step.press.locator).first().press(step.press.key, { timeout });
      else await page.keyboard.press(step.press.key);
    } else if ("select" in step) {
      const v = step.select.value;
      await locate(page, step.select.locator).first().selectOption(typeof v === "string" ? text(v) : v.map(text), { timeout });
    } else if ("check" in step) await locate(page, step.check).first().check({ timeout });
    else if ("uncheck" in step) await locate(page, step.uncheck).first().uncheck({ timeout });
    else if ("hover" in step) await locate(page, step.hover).first().hover({ timeout });
    else if ("wait_for" in step) {
      const w = step.wait_for;
      if (w.locator) await locate(page, w.locator).first().waitFor({ state: w.state ?? "visible", timeout });
      if (w.text !== undefined) await page.getByText(text(w.text)).first().waitFor({ state: w.state ?? "visible", timeout });
      if (w.url !== undefined) {
        const want = text(w.url);
        if (!(await poll(timeout, ctx.signal, async () => urlMatches(page.url(), want)))) {
          throw new StepFailure("failed", `url: expected ${want} within ${timeout} ms, got ${page.url()}`);
        }
      }
    } else if ("expect" in step) await checkExpectations(page, step.expect, timeout, ctx, text);
    else {
      return done([await screenshot(page, ctx, `${String(index + 1).padStart(2, "0")}-${step.screenshot}`)]);
    }
    return done();
  } catch (e) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const f = e instanceof StepFailure ? e : e instanceof MissingVariableError ? new StepFailure("error", e.message) : describe(e, name, timeout);
    return { index, name, status: f.status, duration_ms: performance.now() - started, message: f.message };
  }
}

type Expectations = Extract<BrowserStep, { expect: unknown }>["expect"];

async function checkExpectations(page: Page, ex: Expectations, timeout: number, ctx: StepContext, text: (s: string) => string): Promise<void> {
  if (ex.text !== undefined) {
    const want = text(ex.text);
    const ok = await page.getByText(want).first().waitFor({ state: "visible", timeout }).then(() => true, () => false);
    if (!ok) throw new StepFailure("failed", `text: expected "${want}" to be visible, it was not (page ${page.url()}, title ${JSON.stringify(await page.title())})`);
  }
  if (ex.visible !== undefined) {
    const ok = await locate(page, ex.visible).first().waitFor({ state: "visible", timeout }).then(() => true, () => false);
    if (!ok) throw new StepFailure("failed", `visible: expected ${ex.visible} to be visible, got ${await locate(page, ex.visible).count()} matching elements, none visible`);
  }
  if (ex.hidden !== undefined) {
    const ok = await locate(page, ex.hidden).first().waitFor({ state: "hidden", timeout }).then(() => true, () => false);
    if (!ok) throw new StepFailure("failed", `hidden: expected ${ex.hidden} to be hidden, it is still visible`);
  }
  if (ex.url !== undefined) {
    const want = text(ex.url);
    if (!(await poll(timeout, ctx.signal, async () => urlMatches(page.url(), want)))) {
      throw new StepFailure("failed", `url: expected ${want}, got ${page.url()}`);
    }
  }
  if (ex.title !== undefined) {
    const want = text(ex.title);
    let got = "";
    if (!(await poll(timeout, ctx.signal, async () => (got = await page.title()) === want))) {
      throw new StepFailure("failed", `title: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
    }
  }
  if (ex.count !== undefined) {
    const c = ex.count;
    let got = 0;
    if (!(await poll(timeout, ctx.signal, async () => (got = await locate(page, c.locator).count()) === c.equals))) {
      throw new StepFailure("failed", `count of ${c.locator}: expected ${c.equals}, got ${got}`);
    }
  }
}
