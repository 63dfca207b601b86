// Executes one browser step on a page: navigation, actions, waits, expectations and screenshots.
import type { Locator, Page } from "playwright-core";
import type { BrowserStep } from "../manifest/automation-format";
import { expectedUrlProblem, NOT_WEB, pageUrlProblem, urlIsExpected, webUrl } from "../manifest/browser-urls";
import { locatorProblem } from "../manifest/locator-syntax";
import { browserStepLabel } from "../manifest/step-labels";
import { linearPattern, patternProblem } from "../manifest/patterns";
import { interpolateText, MissingVariableError } from "./interpolation";
import { locate } from "./locators";
import { assertSecretsMayBeCompared, assertSecretsMayGo } from "./secret-hosts";
import { cutText } from "./secret-masking";
import { metadataProblem } from "../security/instance-metadata";
import { blockedMessage, guardOf, metadataMessage } from "./navigation-guard";
import { resolveUrl, StepFailure, type StepContext, type StepResult } from "./step-result";

const DEFAULT_STEP_TIMEOUT_MS = 5_000;

export function browserStepName(step: BrowserStep): string {
  return step.name ?? browserStepLabel(step);
}

type ExpectedUrl = NonNullable<Extract<BrowserStep, { expect: unknown }>["expect"]["url"]>;

/**
 * Types `value` into the field. A value holding a secret is checked against the host of the document that holds the
 * field, not only the page's: a locator may reach into a frame of another host (`iframe >> internal:control=enter-frame
 * >> input`), whose script would read the secret typed there. It goes through the element's handle, so the document
 * checked is the one typed into: one that navigates meanwhile detaches the handle, and the fill fails.
 */
async function fillField(ctx: StepContext, field: Locator, value: string, timeout: number): Promise<void> {
  if (!ctx.secretHosts?.find(value)) {
    await field.fill(value, { timeout });
    return;
  }
  const handle = await field.elementHandle({ timeout });
  try {
    const frame = await handle.ownerFrame();
    assertSecretsMayGo(ctx, frame?.url() ?? "", [value]);
    await handle.fill(value, { timeout });
  } finally {
    await handle.dispose().catch(() => undefined);
  }
}

/** How the page's URL is checked: exact, a path, or a pattern; its `{{…}}` filled in and checked again. */
function urlCheck(expected: ExpectedUrl, field: string, text: (s: string) => string): { want: string; test: (actual: string) => boolean } {
  if (typeof expected === "string") {
    const want = text(expected);
    const problem = expectedUrlProblem(want);
    if (problem) throw new StepFailure("error", `${field}: ${problem}`);
    return { want, test: (actual) => urlIsExpected(actual, want) };
  }
  const source = text(expected.matches);
  const problem = patternProblem(source);
  if (problem) throw new StepFailure("error", `${field}.matches: ${problem}`);
  const pattern = linearPattern(source);
  return { want: `a match of /${source}/`, test: (actual) => pattern.test(actual) };
}

/** The step with `{{…}}` filled into its locators, each checked as it would have been when saved. */
function withLocators(step: BrowserStep, text: (s: string) => string): BrowserStep {
  const fill = (value: string, field: string): string => {
    if (!value.includes("{{")) return value;
    const filled = text(value);
    const problem = locatorProblem(filled);
    if (problem) throw new StepFailure("error", `${field}: ${JSON.stringify(filled)} is not a valid locator: ${problem}`);
    return filled;
  };
  if ("click" in step) return { ...step, click: fill(step.click, "click") };
  if ("fill" in step) return { ...step, fill: { ...step.fill, locator: fill(step.fill.locator, "fill.locator") } };
  if ("press" in step)
    return typeof step.press === "string" || !step.press.locator
      ? step
      : { ...step, press: { ...step.press, locator: fill(step.press.locator, "press.locator") } };
  if ("select" in step) return { ...step, select: { ...step.select, locator: fill(step.select.locator, "select.locator") } };
  if ("check" in step) return { ...step, check: fill(step.check, "check") };
  if ("uncheck" in step) return { ...step, uncheck: fill(step.uncheck, "uncheck") };
  if ("hover" in step) return { ...step, hover: fill(step.hover, "hover") };
  if ("wait_for" in step)
    return step.wait_for.locator ? { ...step, wait_for: { ...step.wait_for, locator: fill(step.wait_for.locator, "wait_for.locator") } } : step;
  if ("expect" in step) {
    const ex = step.expect;
    return {
      ...step,
      expect: {
        ...ex,
        ...(ex.visible !== undefined ? { visible: fill(ex.visible, "expect.visible") } : {}),
        ...(ex.hidden !== undefined ? { hidden: fill(ex.hidden, "expect.hidden") } : {}),
        ...(ex.count !== undefined ? { count: { ...ex.count, locator: fill(ex.count.locator, "expect.count.locator") } } : {}),
      },
    };
  }
  return step;
}

/** The page to open: `{{…}}` filled in, joined to BASE_URL, and only an http(s) URL. */
function pageToOpen(goto: string, ctx: StepContext, text: (s: string) => string): string {
  const resolved = resolveUrl(text(goto), ctx.baseUrl);
  const problem = pageUrlProblem(resolved);
  const url = problem ? null : webUrl(resolved);
  if (!url) throw new StepFailure("error", `goto: ${problem ?? `${JSON.stringify(cutText(resolved, 200))} is not an http or https URL: ${NOT_WEB}`}`);
  return url.href;
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

/** The element an action works on; null for steps that do not act on one element. */
function actionTarget(step: BrowserStep): string | null {
  if ("click" in step) return step.click;
  if ("fill" in step) return step.fill.locator;
  if ("press" in step) return typeof step.press === "string" ? null : (step.press.locator ?? null);
  if ("select" in step) return step.select.locator;
  if ("check" in step) return step.check;
  if ("uncheck" in step) return step.uncheck;
  if ("hover" in step) return step.hover;
  return null;
}

/** Why an element that is there could not be acted on, as far as the page tells now; null if it looks ready. */
async function notReady(el: Locator, needsEditable: boolean): Promise<string | null> {
  const ask = (q: Promise<boolean>) => q.catch(() => null);
  if ((await ask(el.isVisible())) === false) return "it is not visible";
  if ((await ask(el.isEnabled({ timeout: 1_000 }))) === false) return "it is disabled";
  if (needsEditable && (await ask(el.isEditable({ timeout: 1_000 }))) === false) return "it is read-only";
  return null;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/** Which of the wanted values no option of a select has (by value or label), and the options it does have. */
async function missingOptions(page: Page, target: string, wanted: string[]): Promise<{ missing: string[]; options: string } | null> {
  const options = await locate(page, target)
    .first()
    .evaluate((el) => (el instanceof HTMLSelectElement ? [...el.options].map((o) => [o.value, o.label] as [string, string]) : null), undefined, {
      timeout: 5_000,
    })
    .catch(() => null);
  if (!options) return null;
  const missing = wanted.filter((w) => !options.some(([value, label]) => value === w || label === w));
  const listed = options.map(([value, label]) => (label && label !== value ? `${JSON.stringify(value)} (${label})` : JSON.stringify(value))).join(", ");
  return { missing, options: listed || "none" };
}

const missingOptionsMessage = (what: string, found: { missing: string[]; options: string }) =>
  `${what}: expected ${found.missing.length === 1 ? "an option" : "options"} ${found.missing.map((m) => JSON.stringify(m)).join(", ")}, got options ${found.options}`;

/**
 * Why an action or wait did not happen, in one line. Playwright's timeouts mean "the page did not do what the
 * step expects": a failed step, not an error; the message says whether nothing matched or what was not ready.
 */
async function describe(e: unknown, page: Page, step: BrowserStep, what: string, timeoutMs: number, text: (s: string) => string): Promise<StepFailure> {
  const err = e as Error;
  const raw = err.message ?? String(e);
  if (err.name === "TimeoutError") {
    const target = actionTarget(step);
    const count = target
      ? await locate(page, target)
          .count()
          .catch(() => null)
      : null;
    if (target && count === 0) return new StepFailure("failed", `${what}: no element matches ${target} (waited ${timeoutMs} ms)`);
    if (target && "select" in step) {
      const v = step.select.value;
      const found = await missingOptions(page, target, typeof v === "string" ? [text(v)] : v.map(text));
      if (found && found.missing.length > 0) return new StepFailure("failed", missingOptionsMessage(what, found));
    }
    if (target && count) {
      const why = await notReady(locate(page, target).first(), "fill" in step);
      return new StepFailure(
        "failed",
        `${what}: ${target} matched ${plural(count, "element")}, but the first was not ready within ${timeoutMs} ms${why ? ` (${why})` : ""}`,
      );
    }
    return new StepFailure("failed", `${what}: not found or not ready within ${timeoutMs} ms`);
  }
  const first = raw.replace(/\u001b\[\d+m/g, "").split("\n")[0] ?? "";
  if (/ERR_UNSAFE_REDIRECT/.test(first)) {
    return new StepFailure("error", `${what}: the page redirected to a URL that is not http or https, which was blocked: ${NOT_WEB}`);
  }
  if (/ERR_CONNECTION_REFUSED|ERR_NAME_NOT_RESOLVED|ERR_CONNECTION_CLOSED|ERR_EMPTY_RESPONSE|ERR_ADDRESS_UNREACHABLE/.test(first)) {
    return new StepFailure("error", `${what}: could not reach the page (${first}): check that the site is running and that the URL and BASE_URL are right`);
  }
  // "fill: Error: Element is not an <input>…" → "Element is not an <input>…"
  return new StepFailure("failed", `${what}: ${first.replace(/^[\w.]+: (?:Error: )?/, "")}`);
}

/** Whether a Playwright wait came true in time; errors other than its timeout (a bad selector) go on up. */
const cameTrue = (wait: Promise<unknown>): Promise<boolean> =>
  wait.then(
    () => true,
    (e: unknown) => {
      if ((e as Error).name === "TimeoutError") return false;
      throw e;
    },
  );

/** A wait that did not come true, as expected and actual. */
async function waitFor(
  page: Page,
  w: Extract<BrowserStep, { wait_for: unknown }>["wait_for"],
  timeout: number,
  ctx: StepContext,
  text: (s: string) => string,
): Promise<void> {
  const state = w.state ?? "visible";
  if (w.locator) {
    const l = locate(page, w.locator);
    if (!(await cameTrue(l.first().waitFor({ state, timeout }))))
      throw new StepFailure("failed", `wait for ${w.locator}: expected it to be ${state} within ${timeout} ms, got ${await presence(l, state)}`);
  }
  if (w.text !== undefined) {
    const want = text(w.text);
    const l = page.getByText(want);
    if (!(await cameTrue(l.first().waitFor({ state, timeout }))))
      throw new StepFailure(
        "failed",
        `wait for text ${JSON.stringify(want)}: expected it to be ${state} within ${timeout} ms, got ${await presence(l, state)} (page ${page.url()})`,
      );
  }
  if (w.url !== undefined) {
    const check = urlCheck(w.url, "wait_for.url", text);
    if (!(await poll(timeout, ctx.signal, async () => check.test(page.url())))) {
      throw new StepFailure("failed", `url: expected ${check.want} within ${timeout} ms, got ${page.url()}`);
    }
  }
}

/** What the page has for a locator that did not reach the wanted state. */
async function presence(l: Locator, state: "visible" | "hidden" | "attached" | "detached"): Promise<string> {
  const n = await l.count().catch(() => null);
  if (n === null) return "no answer from the page";
  if (n === 0) return "no matching element";
  if (state === "visible") return `${plural(n, "matching element")}, the first not visible`;
  if (state === "hidden") return `${plural(n, "matching element")}, the first still visible`;
  return plural(n, "matching element");
}

export async function screenshot(page: Page, ctx: StepContext, name: string): Promise<string> {
  const file = `${ctx.artifactPrefix}${name}.png`;
  const bytes = await page.screenshot({ fullPage: true, timeout: 10_000 });
  try {
    await ctx.saveArtifact(file, bytes);
  } catch (e) {
    // Where it is kept failed (the artifacts bucket down, say): not the page's doing, so the step errs, not fails.
    throw new StepFailure("error", `the screenshot ${file} was taken but could not be kept: ${(e as Error).message}`);
  }
  return file;
}

/**
 * Runs one step. When the page tried to open something that is not a web page, to reach the instance metadata, or
 * to send a protected environment's secret to a host it does not allow (all stopped in the browser, see
 * navigation-guard.ts), the step fails saying so, and the page is blanked before any screenshot is taken.
 */
export async function executeBrowserStep(page: Page, step: BrowserStep, index: number, ctx: StepContext): Promise<StepResult> {
  const guard = guardOf(page);
  const before = guard?.takeBlocked() ?? [];
  const refusedBefore = guard?.takeRefused() ?? [];
  const metadataBefore = guard?.takeMetadata() ?? [];
  const result: StepResult =
    before.length > 0 || refusedBefore.length > 0 || metadataBefore.length > 0
      ? { index, name: browserStepName(step), status: "error", duration_ms: 0, message: null }
      : await performStep(page, step, index, ctx);
  const blocked = [...before, ...(guard?.takeBlocked() ?? [])];
  const refused = [...refusedBefore, ...(guard?.takeRefused() ?? [])];
  const metadata = [...metadataBefore, ...(guard?.takeMetadata() ?? [])];
  if (blocked.length === 0 && refused.length === 0 && metadata.length === 0) return result;
  await page.goto("about:blank", { timeout: 5_000 }).catch(() => undefined);
  if (ctx.signal.aborted) throw ctx.signal.reason;
  // A secret kept from another host says so first: it is what the person must fix.
  return { ...result, status: "error", message: refused[0] ?? (metadata.length > 0 ? metadataMessage(metadata) : blockedMessage(blocked)) };
}

async function performStep(page: Page, written: BrowserStep, index: number, ctx: StepContext): Promise<StepResult> {
  const started = performance.now();
  const name = browserStepName(written);
  // Not capped by the run's deadline: when that passes, the run's abort closes the page and wins (timed_out).
  const timeout = written.timeout_ms ?? DEFAULT_STEP_TIMEOUT_MS;
  const raw = (s: string) => interpolateText(s, ctx.vars);
  // In a protected environment, locators, expectations and options holding a secret are used only on a page of an
  // allowed host. A page to open and a value to type are checked where they go instead (assertSecretsMayGo).
  const text = ctx.secretHosts
    ? (s: string) => {
        const v = raw(s);
        assertSecretsMayBeCompared(ctx, page.url(), [v]);
        return v;
      }
    : raw;
  const done = (artifacts?: string[]): StepResult => ({
    index,
    name,
    status: "passed",
    duration_ms: performance.now() - started,
    message: null,
    ...(artifacts ? { artifacts } : {}),
  });
  let step = written;
  try {
    step = withLocators(written, text);
    if ("goto" in step) {
      const url = pageToOpen(step.goto, ctx, raw);
      assertSecretsMayGo(ctx, url, [url]);
      const metadata = await metadataProblem(new URL(url));
      if (metadata !== null) throw new StepFailure("error", `goto: svc will not open ${url}: ${metadata}`);
      const res = await page.goto(url, { timeout, waitUntil: "load" });
      const r = done();
      r.message = res ? `HTTP ${res.status()} ${url}` : url;
      return r;
    }
    if ("click" in step) await locate(page, step.click).first().click({ timeout });
    else if ("fill" in step) {
      const value = raw(step.fill.value);
      assertSecretsMayGo(ctx, page.url(), [value]);
      await fillField(ctx, locate(page, step.fill.locator).first(), value, timeout);
    } else if ("press" in step) {
      if (typeof step.press === "string") await page.keyboard.press(step.press);
      else if (step.press.locator) await locate(page, step.press.locator).first().press(step.press.key, { timeout });
      else await page.keyboard.press(step.press.key);
    } else if ("select" in step) {
      const v = step.select.value;
      const wanted = typeof v === "string" ? [text(v)] : v.map(text);
      await locate(page, step.select.locator).first().selectOption(wanted, { timeout });
      // Playwright may settle for some of several values (a single select takes one): every one must exist.
      const found = wanted.length > 1 ? await missingOptions(page, step.select.locator, wanted) : null;
      if (found && found.missing.length > 0) throw new StepFailure("failed", missingOptionsMessage(name, found));
    } else if ("check" in step) await locate(page, step.check).first().check({ timeout });
    else if ("uncheck" in step) await locate(page, step.uncheck).first().uncheck({ timeout });
    else if ("hover" in step) await locate(page, step.hover).first().hover({ timeout });
    else if ("wait_for" in step) {
      await waitFor(page, step.wait_for, timeout, ctx, text);
    } else if ("expect" in step) await checkExpectations(page, step.expect, timeout, ctx, text);
    else {
      return done([await screenshot(page, ctx, `${String(index + 1).padStart(2, "0")}-${step.screenshot}`)]);
    }
    return done();
  } catch (e) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const f =
      e instanceof StepFailure
        ? e
        : e instanceof MissingVariableError
          ? new StepFailure("error", e.message)
          : await describe(e, page, step, name, timeout, raw);
    // Looking at the page to describe the failure takes a moment: a stop that came meanwhile still wins.
    if (ctx.signal.aborted) throw ctx.signal.reason;
    return { index, name, status: f.status, duration_ms: performance.now() - started, message: f.message };
  }
}

type Expectations = Extract<BrowserStep, { expect: unknown }>["expect"];

async function checkExpectations(page: Page, ex: Expectations, timeout: number, ctx: StepContext, text: (s: string) => string): Promise<void> {
  if (ex.text !== undefined) {
    const want = text(ex.text);
    const ok = await cameTrue(page.getByText(want).first().waitFor({ state: "visible", timeout }));
    if (!ok)
      throw new StepFailure("failed", `text: expected "${want}" to be visible, it was not (page ${page.url()}, title ${JSON.stringify(await page.title())})`);
  }
  if (ex.visible !== undefined) {
    const ok = await cameTrue(locate(page, ex.visible).first().waitFor({ state: "visible", timeout }));
    if (!ok)
      throw new StepFailure(
        "failed",
        `visible: expected ${ex.visible} to be visible, got ${await locate(page, ex.visible).count()} matching elements, none visible`,
      );
  }
  if (ex.hidden !== undefined) {
    const ok = await cameTrue(locate(page, ex.hidden).first().waitFor({ state: "hidden", timeout }));
    if (!ok) throw new StepFailure("failed", `hidden: expected ${ex.hidden} to be hidden, it is still visible`);
  }
  if (ex.url !== undefined) {
    const check = urlCheck(ex.url, "expect.url", text);
    if (!(await poll(timeout, ctx.signal, async () => check.test(page.url())))) {
      throw new StepFailure("failed", `url: expected ${check.want}, got ${page.url()}`);
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
