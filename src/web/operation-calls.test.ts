// The web app reaches operations only through the manifest: no hand-built /api/v1/ops paths, no request with a
// method and a path written into a page, and no list of an enum's values copied from the manifest.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { z } from "zod";
import * as manifest from "../manifest/index";

const WEB = import.meta.dir;

interface Source {
  file: string;
  text: string;
}

function webSources(dir = WEB): Source[] {
  const out: Source[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...webSources(path));
    else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name))
      out.push({ file: relative(WEB, path), text: withoutComments(readFileSync(path, "utf8")) });
  }
  return out;
}

/** Drops whole-line comments, so prose about a route is not taken for a request to it. */
function withoutComments(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line))
    .join("\n");
}

/**
 * Every enum of the manifest's schemas (records, inputs, nested fields), as lists of values. HTTP's own methods
 * (an http step's `method`) are left out: they are HTTP's words, and requests by method are checked on their own.
 */
function manifestEnums(): string[][] {
  const found = new Map<string, string[]>();
  const seen = new Set<unknown>();
  const walk = (value: unknown): void => {
    if (value === null || typeof value !== "object" || seen.has(value)) return;
    seen.add(value);
    if (value instanceof z.ZodEnum) {
      const options = value.options.map(String);
      if (options.length >= 2 && !options.includes("GET")) found.set(options.join("|"), options);
      return;
    }
    if (value instanceof z.ZodType) {
      const def = value.def as unknown as Record<string, unknown>;
      for (const key of Object.keys(def)) walk(def[key]);
      return;
    }
    for (const v of Array.isArray(value) ? value : Object.values(value)) walk(v);
  };
  walk(Object.values(manifest));
  return [...found.values()];
}

const ENUMS = manifestEnums();

/** The enum a list of literals was copied from: two or more values, all of one enum. */
function copiedEnum(values: string[]): string[] | null {
  if (values.length < 2) return null;
  return ENUMS.find((e) => values.every((v) => e.includes(v))) ?? null;
}

const literal = (s: string) => s.slice(1, -1);

function problems(src: Source): string[] {
  const out: string[] = [];
  const { file, text } = src;
  if (/["'`][^"'`\n]*\/api\/v1\/ops/.test(text)) out.push(`${file}: a hand-built /api/v1/ops address`);
  if (file !== "api.ts" && /\bfetch\s*\(/.test(text)) out.push(`${file}: fetch outside api.ts`);
  // A request spelled out as a method and a path: only the web app's own routes (`web(…)`) are written so.
  for (const m of text.matchAll(/\b(\w+)\s*(?:<(?:[^<>()]|<[^<>()]*>)*>)?\s*\(\s*["'`](?:GET|POST|PUT|PATCH|DELETE)["'`]\s*,[^\n;]*/g)) {
    if (m[1] === "web") continue;
    out.push(`${file}: a request by method and path: ${m[0].trim()}`);
  }
  // Copied enums: an array of string literals, a union of string literal types, the options of one <select>.
  for (const m of text.matchAll(/\[\s*(?:(?:"[^"\n]*"|'[^'\n]*')\s*,\s*)+(?:"[^"\n]*"|'[^'\n]*')\s*,?\s*\]/g)) {
    const values = [...m[0].matchAll(/"[^"\n]*"|'[^'\n]*'/g)].map((v) => literal(v[0]));
    if (copiedEnum(values)) out.push(`${file}: a copied enum ${m[0]}`);
  }
  for (const m of text.matchAll(/(?:(?:"[\w-]*"|'[\w-]*')\s*\|\s*)+(?:"[\w-]*"|'[\w-]*')/g)) {
    const values = [...m[0].matchAll(/"[\w-]*"|'[\w-]*'/g)].map((v) => literal(v[0]));
    if (copiedEnum(values)) out.push(`${file}: a copied enum type ${m[0]}`);
  }
  for (const m of text.matchAll(/<select\b[\s\S]*?<\/select>/g)) {
    const values = [...m[0].matchAll(/<option\b([^>]*)>([^<{]*)<\/option>/g)]
      .map((o) => /\bvalue="([^"]*)"/.exec(o[1] ?? "")?.[1] ?? (o[2] ?? "").trim())
      .filter((v) => v !== "");
    if (copiedEnum(values)) out.push(`${file}: a copied enum in <select> options ${values.join(", ")}`);
  }
  return out;
}

describe("the web app calls operations through the manifest", () => {
  test("the manifest's enums are found (the copied-enum check has something to compare with)", () => {
    const has = (values: string[]) => ENUMS.some((e) => values.every((v) => e.includes(v)) && e.length === values.length);
    expect(has(manifest.RunStatus.options)).toBe(true);
    expect(has(manifest.Role.options)).toBe(true);
    expect(has(manifest.AutomationKind.options)).toBe(true);
    expect(has(["api", "cli", "mcp", "web", "schedule", "assistant", "test"])).toBe(true); // a run's trigger, declared inline in the record
  });

  test("the checks catch each pattern they exist for", () => {
    const caught = (text: string, file = join("pages", "x.tsx")) => problems({ file, text }).length;
    expect(caught('const p = await op<Project>("GET", `/projects/${enc(project)}`);')).toBe(1);
    expect(caught('await op("DELETE", `/keys/${id}`);')).toBe(1);
    expect(caught('useLoad(() => op<Page<ApiKey>>("GET", "/keys?limit=200"), "keys");')).toBe(1);
    expect(caught("<a href={`/api/v1/ops/projects/${p}/runs/${r}/junit`}>JUnit</a>")).toBe(1);
    expect(caught('const r = await fetch("/x");')).toBe(1);
    expect(caught('const STATUSES = ["queued", "running", "passed"];')).toBe(1);
    expect(caught('const [kind, setKind] = useState<"http" | "browser">("http");')).toBe(1);
    expect(caught('<select><option value="">any</option><option>draft</option><option>active</option></select>')).toBe(1);
    // Not copies: the web app's own routes, a choice of the page's own, a comparison.
    expect(caught('await web("POST", "/logout");')).toBe(0);
    expect(caught('<select><option value="none">none</option><option value="web">a web page</option><option value="api">API</option></select>')).toBe(0);
    expect(caught('r.status === "queued" || r.status === "running"')).toBe(0);
    expect(caught('for (const d of drafts) await op("PATCH", path(d.id), { status: "active" });', join("pages", "feature.tsx"))).toBe(1);
  });

  test("no page builds an operation's path or copies one of the manifest's enums", () => {
    const sources = webSources();
    expect(sources.length).toBeGreaterThan(10);
    expect(sources.flatMap(problems)).toEqual([]);
  });
});
