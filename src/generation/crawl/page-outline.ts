// Reads a page's outline with a real HTML parser: its title, headings, same-page links and forms with their fields.
import { type HTMLElement, parse } from "node-html-parser";

export interface FormField {
  /** A locator in the step format that finds the field: by its label when it has one, else its placeholder, else its name. */
  locator: string;
  describe: string;
}

export interface PageOutline {
  url: string;
  title: string;
  headings: { level: number; text: string }[];
  links: { url: string; text: string }[];
  forms: { action: string; fields: FormField[] }[];
}

const clean = (s: string) => s.replace(/\s+/g, " ").trim();
const NOT_FIELDS = new Set(["hidden", "submit", "button", "reset", "image"]);

function labelOf(root: HTMLElement, field: HTMLElement): string {
  const aria = field.getAttribute("aria-label");
  if (aria && clean(aria)) return clean(aria);
  const id = field.getAttribute("id");
  if (id) {
    const byFor = root.querySelectorAll("label").find((l) => l.getAttribute("for") === id);
    if (byFor && clean(byFor.text)) return clean(byFor.text);
  }
  const wrapping = field.closest("label");
  return wrapping ? clean(wrapping.text) : "";
}

/**
 * Whether the field's only label is one wrapped around it and the field has text of its own (a select's options, a
 * textarea's content): that label's text runs on into the field's (`Sort by NewestTitle`), so it is neither a name
 * a person reads nor one that holds once the options change.
 */
function wrappedWithText(root: HTMLElement, el: HTMLElement): boolean {
  if (el.tagName !== "SELECT" && el.tagName !== "TEXTAREA") return false;
  if (clean(el.getAttribute("aria-label") ?? "")) return false;
  const id = el.getAttribute("id");
  if (id && root.querySelectorAll("label").some((l) => l.getAttribute("for") === id && clean(l.text))) return false;
  return el.closest("label") !== null && clean(el.text) !== "";
}

function fieldOf(root: HTMLElement, el: HTMLElement): FormField | null {
  const type = (el.getAttribute("type") ?? "text").toLowerCase();
  if (el.tagName === "INPUT" && NOT_FIELDS.has(type)) return null;
  const name = el.getAttribute("name");
  if (name && wrappedWithText(root, el))
    return { locator: `css=${el.tagName.toLowerCase()}[name=${JSON.stringify(name)}]`, describe: `${el.tagName.toLowerCase()} "${name}"` };
  const label = labelOf(root, el);
  if (label) return { locator: `label=${JSON.stringify(label)}`, describe: `"${label}"` };
  const placeholder = clean(el.getAttribute("placeholder") ?? "");
  if (placeholder) return { locator: `placeholder=${JSON.stringify(placeholder)}`, describe: `the one with placeholder "${placeholder}"` };
  if (name) return { locator: `css=${el.tagName.toLowerCase()}[name=${JSON.stringify(name)}]`, describe: `${el.tagName.toLowerCase()} "${name}"` };
  return null;
}

export function outlinePage(html: string, pageUrl: string): PageOutline {
  const root = parse(html, { comment: false });
  const base = new URL(pageUrl);
  const links: PageOutline["links"] = [];
  for (const a of root.querySelectorAll("a[href]")) {
    const href = a.getAttribute("href") ?? "";
    let target: URL;
    try {
      target = new URL(href, base);
    } catch {
      continue;
    }
    if (target.protocol !== "http:" && target.protocol !== "https:") continue;
    target.hash = "";
    links.push({ url: target.toString(), text: clean(a.text) });
  }
  return {
    url: pageUrl,
    title: clean(root.querySelector("title")?.text ?? ""),
    headings: root
      .querySelectorAll("h1, h2")
      .map((h) => ({ level: Number(h.tagName.slice(1)), text: clean(h.text) }))
      .filter((h) => h.text !== ""),
    links,
    forms: root.querySelectorAll("form").map((f) => ({
      action: f.getAttribute("action") ?? "",
      fields: f
        .querySelectorAll("input, select, textarea")
        .map((el) => fieldOf(root, el))
        .filter((x): x is FormField => x !== null),
    })),
  };
}
