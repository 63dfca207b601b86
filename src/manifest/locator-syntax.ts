// Checks a locator's syntax without a browser, so a malformed one is refused when saved (see docs/automations.md).
import { parse as parseCss } from "css-what";

/** The ARIA roles Playwright's getByRole knows. */
export const ARIA_ROLES = new Set(
  (
    "alert alertdialog application article banner blockquote button caption cell checkbox code columnheader combobox " +
    "complementary contentinfo definition deletion dialog directory document emphasis feed figure form generic grid " +
    "gridcell group heading img insertion link list listbox listitem log main marquee math meter menu menubar menuitem " +
    "menuitemcheckbox menuitemradio navigation none note option paragraph presentation progressbar radio radiogroup " +
    "region row rowgroup rowheader scrollbar search searchbox separator slider spinbutton status strong subscript " +
    "superscript switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree treegrid treeitem"
  ).split(" "),
);

/** `role=NAME` or `role=NAME[name="…"]` (or single quotes); the same reading locate() uses. */
/**
 * `role=heading[name="Items"]`: the name as a substring, ignoring case (Playwright's default); `[name="Items"s]`
 * (Playwright's own flag): exactly that name. Groups: role, name in "…", name in '…', the flag.
 */
export const ROLE_LOCATOR = /^\s*([a-z]+)\s*(?:\[\s*name\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')\s*([si])?\s*\])?\s*$/i;

/** Whether a role locator's name must match exactly (the `s` flag). */
export const exactRoleName = (m: RegExpExecArray) => m[4]?.toLowerCase() === "s";

const FORMS = 'write css=…, a CSS selector, text=…, label=…, placeholder=…, button=…, role=button[name="…"] or testid=…';

/** Playwright's selector engines a chained part (`… >> engine=…`) or a bare selector may name. */
const ENGINES = new Set(["css", "xpath", "text", "id", "data-testid", "data-test-id", "data-test", "nth", "visible", "role", "aria-ref"]);

/** Unbalanced quotes, brackets or parentheses, as a message; null when balanced. */
function balanceProblem(s: string): string | null {
  const open: string[] = [];
  const pairs: Record<string, string> = { ")": "(", "]": "[" };
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      const end = closingQuote(s, i);
      if (end < 0) return `the quote ${c} at position ${i + 1} is never closed`;
      i = end;
      continue;
    }
    if (c === "(" || c === "[") open.push(c);
    else if (c === ")" || c === "]") {
      if (open.pop() !== pairs[c]) return `the ${c} at position ${i + 1} closes nothing`;
    }
  }
  const last = open.pop();
  return last ? `a ${last} is never closed` : null;
}

function closingQuote(s: string, from: number): number {
  const q = s[from];
  for (let i = from + 1; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === q) return i;
  }
  return -1;
}

/** Splits Playwright's `a >> b` chain outside quotes and brackets. */
function chainParts(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === "\\") i++;
    else if (c === '"' || c === "'" || c === "`") i = Math.max(i, closingQuote(s, i));
    else if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (depth === 0 && c === ">" && s[i + 1] === ">") {
      parts.push(s.slice(start, i));
      start = i + 2;
      i++;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

function cssProblem(css: string): string | null {
  if (css.trim() === "") return "the CSS selector is empty";
  try {
    parseCss(css);
    return null;
  } catch (e) {
    return `${JSON.stringify(css.trim())} is not a valid CSS selector (${(e as Error).message})`;
  }
}

/** One part of a Playwright selector: `engine=body`, an XPath, a quoted text, or CSS. */
function selectorPartProblem(part: string): string | null {
  const s = part.trim();
  if (s === "") return "a part of the selector chain (between >>) is empty";
  const eq = s.indexOf("=");
  const engine = eq > 0 && /^[a-zA-Z_0-9\-+:*]+$/.test(s.slice(0, eq).trim()) ? s.slice(0, eq).trim().toLowerCase() : null;
  if (engine === null) {
    if (s.startsWith("//") || s.startsWith("..")) return balanceProblem(s);
    if (s.startsWith('"') || s.startsWith("'")) return balanceProblem(s);
    return cssProblem(s);
  }
  const body = s.slice(eq + 1);
  if (engine === "css") return cssProblem(body);
  if (engine === "nth") return /^\s*-?\d+\s*$/.test(body) ? null : `nth=${body.trim()} needs a whole number`;
  if (engine === "role") return roleProblem(body);
  if (!ENGINES.has(engine) && !engine.startsWith("internal:")) return `"${engine}=" is not a locator form: ${FORMS}`;
  if (body.trim() === "") return `${engine}= needs a value`;
  return balanceProblem(body);
}

function roleProblem(rest: string): string | null {
  const m = ROLE_LOCATOR.exec(rest);
  if (!m) return `"role=${rest}" does not read: write role=button or role=button[name="Sign in"]`;
  const role = (m[1] as string).toLowerCase();
  return ARIA_ROLES.has(role) ? null : `"${m[1]}" is not an ARIA role (e.g. button, link, heading, textbox, checkbox)`;
}

function quotedTextProblem(kind: string, rest: string): string | null {
  const t = rest.trim();
  if (t === "") return `${kind}= needs a value`;
  if (t.startsWith('"') && !/^"(?:.*)"$/s.test(t)) return `${kind}=${t}: the quote is never closed`;
  return null;
}

/**
 * Why a locator cannot be used, or null. Reads it as locate() does: the first `=` names the form when it is one
 * of ours, else the whole string is a Playwright selector (CSS, possibly chained with >>).
 */
export function locatorProblem(locator: string): string | null {
  if (locator.trim() === "") return `the locator is empty: ${FORMS}`;
  const eq = locator.indexOf("=");
  const kind = eq > 0 ? locator.slice(0, eq).trim().toLowerCase() : "";
  const rest = eq > 0 ? locator.slice(eq + 1) : locator;
  switch (kind) {
    case "text":
    case "label":
    case "placeholder":
    case "button":
      return quotedTextProblem(kind, rest);
    case "testid":
      return rest.trim() === "" ? "testid= needs a value" : null;
    case "role":
      return roleProblem(rest);
    case "css":
      return chainProblem(`css=${rest}`);
    default:
      return chainProblem(locator);
  }
}

function chainProblem(selector: string): string | null {
  for (const part of chainParts(selector)) {
    const p = selectorPartProblem(part);
    if (p) return p;
  }
  return null;
}
