// The crawl generator: browser smoke automations for a web feature's page and the same-origin pages it links to.
import type { GeneratedDraft, GenerationWarningRecord } from "../../core/generations/queue";
import type { BrowserStep, HttpStep } from "../../manifest/automation-format";
import type { Generator } from "../types";
import { crawl } from "./fetch-pages";
import type { PageOutline } from "./page-outline";

const MAX_HEADINGS = 5;
const MAX_LINKS = 50;
const TAGS = ["generated", "crawl", "smoke"];

const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};
/** A heading by its exact name (`s`): "Items" must not pass on a page whose only heading is "All items". */
const headingLocator = (text: string) => `role=heading[name=${JSON.stringify(text)}s]`;

function pageAutomations(page: PageOutline, linkedOnce: Set<string>): GeneratedDraft[] {
  const path = pathOf(page.url);
  const out: GeneratedDraft[] = [];
  const key = page.headings.slice(0, MAX_HEADINGS);
  const loads: BrowserStep[] = [{ goto: page.url }];
  if (page.title) loads.push({ expect: { title: page.title } });
  for (const h of key) loads.push({ expect: { visible: headingLocator(h.text) } });
  out.push({
    name: `Page ${path} loads${page.title ? ` with its title "${page.title}"` : ""}`.slice(0, 200),
    kind: "browser",
    tags: TAGS,
    description: `Smoke test read from ${page.url}: the page loads${page.title ? " with its title" : ""}${key.length ? ` and its key headings (${key.map((h) => `"${h.text}"`).join(", ")}) are visible` : ""}.`,
    steps: loads,
  });
  page.forms.forEach((form, i) => {
    if (form.fields.length === 0) return;
    out.push({
      name: `Form ${page.forms.length > 1 ? `${i + 1} ` : ""}on ${path} has its fields`.slice(0, 200),
      kind: "browser",
      tags: TAGS,
      description: `Smoke test read from ${page.url}: the form${form.action ? ` (action ${form.action})` : ""} shows its fields ${form.fields.map((f) => f.describe).join(", ")}.`,
      steps: [{ goto: page.url }, ...form.fields.map((f): BrowserStep => ({ expect: { visible: f.locator } }))],
    });
  });
  const origin = new URL(page.url).origin;
  const internal = [...new Set(page.links.map((l) => l.url))].filter((u) => new URL(u).origin === origin && !linkedOnce.has(u)).slice(0, MAX_LINKS);
  for (const u of internal) linkedOnce.add(u);
  if (internal.length > 0) {
    out.push({
      name: `Links on ${path} answer 2xx`.slice(0, 200),
      kind: "http",
      tags: TAGS,
      description: `Smoke test read from ${page.url}: every same-origin link on it (not already checked from another page) answers with a 2xx status.`,
      steps: internal.map((u): HttpStep => ({ name: `GET ${pathOf(u)}`, request: { method: "GET", url: u }, expect: [{ status: { gte: 200, lt: 300 } }] })),
    });
  }
  return out;
}

export const crawlGenerator: Generator = {
  name: "crawl",
  missingInput(input) {
    const t = input.feature.target;
    if (t?.kind !== "web") return 'the feature has no web page to read (set its target to {"kind": "web", "url": "https://…"})';
    if (!/^https?:\/\//i.test(t.url)) return `the feature's URL "${t.url}" is not an absolute http(s) URL`;
    return null;
  },
  async generate(input, run) {
    const t = input.feature.target;
    if (t?.kind !== "web") return { automations: [], warnings: [] };
    const result = await crawl(t.url, input.config.crawl_max_pages, run.signal, run.progress);
    const warnings: GenerationWarningRecord[] = result.problems.map((p) => ({
      generator: "crawl",
      message: `Could not read the linked page ${p.url}: ${p.problem}`,
    }));
    const linkedOnce = new Set<string>();
    return { automations: result.pages.flatMap((p) => pageAutomations(p, linkedOnce)), warnings };
  },
};
