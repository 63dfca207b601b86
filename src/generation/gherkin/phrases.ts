// The library of step phrases the gherkin generator understands (listed for users in docs/generation.md).
import type { Assertion, BrowserStep } from "../../manifest/automation-format";

/** What one understood line contributes to a scenario. */
export type PhraseEffect =
  | { kind: "page"; step: BrowserStep }
  | { kind: "request"; method: string; url: string; body?: { json: unknown } | { text: string } }
  | { kind: "assert"; assertion: Assertion };

export interface Phrase {
  /** How users write it, with example values; also what a suggestion shows. */
  example: string;
  pattern: RegExp;
  /** `docString` is the text block under the line (`"""…"""`), when there is one. */
  build(m: string[], docString: string | undefined): PhraseEffect | { error: string };
}

const Q = String.raw`"((?:[^"\\]|\\.)*)"`;
const unescapeQuoted = (s: string | undefined) => (s ?? "").replace(/\\(.)/g, "$1");
const quoteLocator = (s: string) => JSON.stringify(s);

/** A literal in a phrase: a number, a "quoted string", true, false or null. */
export function parseLiteral(raw: string): { value: unknown } | null {
  const t = raw.trim();
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(t)) return { value: Number(t) };
  if (t === "true") return { value: true };
  if (t === "false") return { value: false };
  if (t === "null") return { value: null };
  const m = /^"((?:[^"\\]|\\.)*)"$/.exec(t);
  return m ? { value: unescapeQuoted(m[1]) } : null;
}

/** `user.name`, `items.0.id` → `$.user.name`, `$.items[0].id`. */
export function jsonPath(dotted: string): string {
  return `$${dotted
    .split(".")
    .filter((p) => p !== "")
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
    .join("")}`;
}

/**
 * What `I click "…"` means: the button or link with exactly that accessible name, or, only when the page has
 * none, the element showing exactly that text (the step format's `button="…"` locator). A heading with the same
 * words therefore never competes with the button.
 */
export function clickTarget(name: string): string {
  return `button=${quoteLocator(name)}`;
}

/** Key names a browser knows, as Playwright writes them; any one character is a key too. */
const KEYS = new Set(
  (
    "Enter Tab Escape Backspace Delete Insert Home End PageUp PageDown ArrowUp ArrowDown ArrowLeft ArrowRight Space " +
    "F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 Backquote Minus Equal Backslash BracketLeft BracketRight Semicolon Quote Comma Period Slash"
  ).split(" "),
);
const MODIFIERS = new Set(["Shift", "Control", "Alt", "Meta", "ControlOrMeta"]);

/** Why a key to press is not one (`Enter`, `a`, `Control+A`, `Shift+Tab`), or null. */
export function keyProblem(key: string): string | null {
  const parts = key.split("+");
  const last = parts.pop() ?? "";
  const isKey = KEYS.has(last) || [...last].length === 1 || /^(Key[A-Z]|Digit[0-9]|Numpad[0-9])$/.test(last) || MODIFIERS.has(last);
  if (isKey && parts.every((m) => MODIFIERS.has(m))) return null;
  return `"${key}" is not a key: write a key name (Enter, Tab, Escape, ArrowDown, a, Control+A, …); to press a button write I click "${key}"`;
}

function pressStep(key: string, locator?: string): PhraseEffect | { error: string } {
  const problem = keyProblem(key);
  if (problem) return { error: problem };
  return { kind: "page", step: { press: locator ? { locator, key } : key } };
}

function requestBody(docString: string | undefined): { json: unknown } | { text: string } | { error: string } {
  if (docString === undefined) return { error: 'a request "with body:" needs a doc string ("""…""") under the line' };
  try {
    return { json: JSON.parse(docString) };
  } catch {
    return { text: docString };
  }
}

export const PHRASES: Phrase[] = [
  { example: 'I open "/login"', pattern: new RegExp(`^I open ${Q}$`), build: (m) => ({ kind: "page", step: { goto: unescapeQuoted(m[1]) } }) },
  {
    example: 'I fill "Email" with "a@b.c"',
    pattern: new RegExp(`^I fill ${Q} with ${Q}$`),
    build: (m) => ({ kind: "page", step: { fill: { locator: `label=${quoteLocator(unescapeQuoted(m[1]))}`, value: unescapeQuoted(m[2]) } } }),
  },
  {
    example: 'I click the text "Read more"',
    pattern: new RegExp(`^I click the text ${Q}$`),
    build: (m) => ({ kind: "page", step: { click: `text=${quoteLocator(unescapeQuoted(m[1]))}` } }),
  },
  { example: 'I click "Sign in"', pattern: new RegExp(`^I click ${Q}$`), build: (m) => ({ kind: "page", step: { click: clickTarget(unescapeQuoted(m[1])) } }) },
  {
    example: 'I fill the field with placeholder "What needs to be done?" with "milk"',
    pattern: new RegExp(`^I fill the field with placeholder ${Q} with ${Q}$`),
    build: (m) => ({ kind: "page", step: { fill: { locator: `placeholder=${quoteLocator(unescapeQuoted(m[1]))}`, value: unescapeQuoted(m[2]) } } }),
  },
  {
    example: 'I press "Enter" in the field with placeholder "What needs to be done?"',
    pattern: new RegExp(`^I press ${Q} in the field with placeholder ${Q}$`),
    build: (m) => pressStep(unescapeQuoted(m[1]), `placeholder=${quoteLocator(unescapeQuoted(m[2]))}`),
  },
  {
    example: 'I press "Enter" in the "New todo" field',
    pattern: new RegExp(`^I press ${Q} in the ${Q} field$`),
    build: (m) => pressStep(unescapeQuoted(m[1]), `label=${quoteLocator(unescapeQuoted(m[2]))}`),
  },
  { example: 'I press "Enter"', pattern: new RegExp(`^I press ${Q}$`), build: (m) => pressStep(unescapeQuoted(m[1])) },
  {
    example: 'I should see "Welcome"',
    pattern: new RegExp(`^I should see ${Q}$`),
    build: (m) => ({ kind: "page", step: { expect: { text: unescapeQuoted(m[1]) } } }),
  },
  {
    example: 'the URL should be "/dashboard"',
    pattern: new RegExp(`^the URL should be ${Q}$`, "i"),
    build: (m) => ({ kind: "page", step: { expect: { url: unescapeQuoted(m[1]) } } }),
  },
  {
    example: 'the title should be "Sign in"',
    pattern: new RegExp(`^the (?:page )?title should be ${Q}$`),
    build: (m) => ({ kind: "page", step: { expect: { title: unescapeQuoted(m[1]) } } }),
  },
  {
    example: 'I send POST "/items" with body:',
    pattern: new RegExp(`^I send ([A-Za-z]+) ${Q} with body:?$`),
    build: (m, doc) => {
      const body = requestBody(doc);
      return "error" in body ? body : { kind: "request", method: (m[1] ?? "GET").toUpperCase(), url: unescapeQuoted(m[2]), body };
    },
  },
  {
    example: 'I send GET "/items/1"',
    pattern: new RegExp(`^I send ([A-Za-z]+) ${Q}$`),
    build: (m) => ({ kind: "request", method: (m[1] ?? "GET").toUpperCase(), url: unescapeQuoted(m[2]) }),
  },
  {
    example: "the response status should be 200",
    pattern: /^the response status should be (\d{3})$/,
    build: (m) => ({ kind: "assert", assertion: { status: Number(m[1]) } }),
  },
  {
    example: 'the response field "id" should be 1',
    pattern: new RegExp(`^the response field ${Q} should be (.+)$`),
    build: (m) => {
      const lit = parseLiteral(m[2] ?? "");
      if (!lit) return { error: `the expected value ${m[2]} is not a number, a "quoted string", true, false or null` };
      return { kind: "assert", assertion: { json: jsonPath(unescapeQuoted(m[1])), equals: lit.value } };
    },
  },
  {
    example: 'the response field "name" should contain "copy"',
    pattern: new RegExp(`^the response field ${Q} should contain ${Q}$`),
    build: (m) => ({ kind: "assert", assertion: { json: jsonPath(unescapeQuoted(m[1])), contains: unescapeQuoted(m[2]) } }),
  },
  {
    example: 'the response header "content-type" should contain "json"',
    pattern: new RegExp(`^the response header ${Q} should contain ${Q}$`),
    build: (m) => ({ kind: "assert", assertion: { header: unescapeQuoted(m[1]), contains: unescapeQuoted(m[2]) } }),
  },
  {
    example: 'the response header "cache-control" should be "no-store"',
    pattern: new RegExp(`^the response header ${Q} should be ${Q}$`),
    build: (m) => ({ kind: "assert", assertion: { header: unescapeQuoted(m[1]), equals: unescapeQuoted(m[2]) } }),
  },
  {
    example: 'the response body should contain "ok"',
    pattern: new RegExp(`^the response body should contain ${Q}$`),
    build: (m) => ({ kind: "assert", assertion: { body: { contains: unescapeQuoted(m[1]) } } }),
  },
];

export type Match = { phrase: Phrase; effect: PhraseEffect } | { phrase: Phrase; error: string } | null;

export function matchPhrase(text: string, docString: string | undefined): Match {
  const t = text.trim();
  for (const phrase of PHRASES) {
    const m = phrase.pattern.exec(t);
    if (!m) continue;
    const built = phrase.build([...m], docString);
    return "error" in built ? { phrase, error: built.error } : { phrase, effect: built };
  }
  return null;
}
