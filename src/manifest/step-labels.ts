// How a step reads to people: `click "Sign in"`, `fill "Email"`, `expect text "Welcome"`, `GET /items`. The run
// engine names step results with it, and the web app reads names recorded earlier through it, so a locator shows
// as the name a person sees on the page, never as a selector chain.
import type { BrowserStep, HttpStep } from "./automation-format";
import { ROLE_LOCATOR } from "./locator-syntax";

/** `"quoted"` text as written (its escapes undone), else the text itself, trimmed. */
function unquote(raw: string): string {
  const t = raw.trim();
  const m = /^"((?:[^"\\]|\\.)*)"$/s.exec(t) ?? /^'((?:[^'\\]|\\.)*)'$/s.exec(t);
  return m ? (m[1] as string).replace(/\\(.)/g, "$1") : t;
}

const quoted = (text: string) => JSON.stringify(text);

/** Roles a person clicks by their name alone: `click "Sign in"` for a button or a link. */
const PLAIN_ROLES = new Set(["button", "link"]);

/**
 * Playwright's own selector parts (`internal:role=button[name="Sign in"s]`, `internal:text="Hi"i`, …), as names
 * recorded by earlier versions hold them: the first part that names something.
 */
function internalLabel(locator: string): string | null {
  const part = /internal:(role|text|label|attr|testid)=((?:[^"\\\s]|\\.|"(?:[^"\\]|\\.)*")*)/.exec(locator);
  if (!part) return null;
  const [, kind, body = ""] = part;
  const text = (s: string) => JSON.parse(s) as string;
  if (kind === "role") {
    const m = /^([a-z]+)(?:\[name=("(?:[^"\\]|\\.)*")[si]?\])?/i.exec(body);
    if (!m) return null;
    const role = (m[1] as string).toLowerCase();
    if (m[2] === undefined) return role;
    return PLAIN_ROLES.has(role) ? quoted(text(m[2])) : `${role} ${quoted(text(m[2]))}`;
  }
  const value = /("(?:[^"\\]|\\.)*")[si]?\]?$/.exec(body)?.[1];
  if (value === undefined) return null;
  if (kind === "text") return `text ${quoted(text(value))}`;
  if (kind === "testid") return `test id ${quoted(text(value))}`;
  if (kind === "attr") return /^\[placeholder=/.test(body) ? `placeholder ${quoted(text(value))}` : null;
  return quoted(text(value));
}

/**
 * A locator as a person reads it: `role=button[name="Sign in"]`, `button="Sign in"` and `label="Email"` read
 * `"Sign in"` and `"Email"`; other roles keep their role (`heading "About us"`); `text=`, `placeholder=` and
 * `testid=` say so; CSS reads as the selector.
 */
export function locatorLabel(locator: string): string {
  if (locator.includes("internal:")) return internalLabel(locator) ?? locator;
  const eq = locator.indexOf("=");
  const kind = eq > 0 ? locator.slice(0, eq).trim().toLowerCase() : "";
  const rest = eq > 0 ? locator.slice(eq + 1) : locator;
  switch (kind) {
    case "label":
    case "button":
      return quoted(unquote(rest));
    case "text":
      return `text ${quoted(unquote(rest))}`;
    case "placeholder":
      return `placeholder ${quoted(unquote(rest))}`;
    case "testid":
      return `test id ${quoted(unquote(rest))}`;
    case "role": {
      const m = ROLE_LOCATOR.exec(rest);
      if (!m) return locator;
      const role = (m[1] as string).toLowerCase();
      const name = m[2] ?? m[3];
      if (name === undefined) return role;
      const shown = quoted(name.replace(/\\(.)/g, "$1"));
      return PLAIN_ROLES.has(role) ? shown : `${role} ${shown}`;
    }
    case "css":
      return rest.trim();
    default:
      return locator;
  }
}

function expectLabel(expect: Extract<BrowserStep, { expect: unknown }>["expect"]): string {
  const parts: string[] = [];
  if (expect.text !== undefined) parts.push(`text ${quoted(expect.text)}`);
  if (expect.visible !== undefined) parts.push(`visible ${locatorLabel(expect.visible)}`);
  if (expect.hidden !== undefined) parts.push(`hidden ${locatorLabel(expect.hidden)}`);
  if (expect.url !== undefined) parts.push(`url ${typeof expect.url === "string" ? quoted(expect.url) : `matching /${expect.url.matches}/`}`);
  if (expect.title !== undefined) parts.push(`title ${quoted(expect.title)}`);
  if (expect.count !== undefined) parts.push(`count ${expect.count.equals} of ${locatorLabel(expect.count.locator)}`);
  return `expect ${parts.join(", ")}`;
}

/** What a browser step does, in words (its own `name` aside). */
export function browserStepLabel(step: BrowserStep): string {
  if ("goto" in step) return `goto ${step.goto}`;
  if ("click" in step) return `click ${locatorLabel(step.click)}`;
  if ("fill" in step) return `fill ${locatorLabel(step.fill.locator)}`;
  if ("press" in step)
    return typeof step.press === "string"
      ? `press ${step.press}`
      : `press ${step.press.key}${step.press.locator ? ` in ${locatorLabel(step.press.locator)}` : ""}`;
  if ("select" in step) return `select in ${locatorLabel(step.select.locator)}`;
  if ("check" in step) return `check ${locatorLabel(step.check)}`;
  if ("uncheck" in step) return `uncheck ${locatorLabel(step.uncheck)}`;
  if ("hover" in step) return `hover ${locatorLabel(step.hover)}`;
  if ("wait_for" in step) {
    const w = step.wait_for;
    if (w.locator !== undefined) return `wait for ${locatorLabel(w.locator)}`;
    if (w.text !== undefined) return `wait for text ${quoted(w.text)}`;
    return `wait for url ${typeof w.url === "string" ? quoted(w.url) : `matching /${w.url?.matches}/`}`;
  }
  if ("expect" in step) return expectLabel(step.expect);
  return `screenshot ${step.screenshot}`;
}

export function httpStepLabel(step: HttpStep): string {
  return `${step.request.method} ${step.request.url}`;
}

/** A step's name: its own, else what it does. */
export function stepLabel(step: HttpStep | BrowserStep): string {
  if (step.name) return step.name;
  return "request" in step ? httpStepLabel(step) : browserStepLabel(step);
}

const RECORDED = /^(click|fill|check|uncheck|hover|select in|wait for|expect visible|expect hidden) (.+)$/s;

/**
 * A step result's name as recorded, made readable: names recorded before locators were labelled show the locator
 * itself (`click internal:role=button[name="Login"s] >> internal:or=…`, `fill label="Email"`); those read as the
 * labels above. Any other name is returned as it is.
 */
export function readableStepName(name: string): string {
  const m = RECORDED.exec(name);
  if (!m) return name;
  const verb = m[1] as string;
  let rest = m[2] as string;
  // `expect visible "role=heading[name="About us"]"` quoted the whole locator.
  if (verb.startsWith("expect ") && rest.startsWith('"') && rest.endsWith('"')) rest = rest.slice(1, -1);
  const looksLikeLocator = rest.includes("internal:") || /^(css|text|label|placeholder|button|role|testid)=/i.test(rest.trim());
  return looksLikeLocator ? `${verb} ${locatorLabel(rest)}` : name;
}
