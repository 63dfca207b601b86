// Every error code a handler can throw is declared by its operation, so the OpenAPI document lists it. The
// handlers' code is read, not run: a code thrown only in a race (a project deleted twice at once) counts too.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { answerableErrors } from "../src/http/openapi";
import { ops } from "../src/manifest";
import type { Operation } from "../src/manifest/define";
import { ERROR_TABLE, type ErrorCode } from "../src/manifest/errors";

const ROOT = resolve(import.meta.dir, "..");
const CORE = join(ROOT, "src/core");

/** The helpers of src/manifest/errors.ts that make an AppError, by the code they make. */
const THROWERS: Record<string, ErrorCode> = { notFound: "not_found", conflict: "conflict", forbidden: "forbidden", invalid: "invalid_request" };

interface Definition {
  file: string;
  body: string;
}

interface SourceFile {
  definitions: Map<string, Definition>;
  /** Local name → [file, exported name]; namespace imports map to [file, "*"]. */
  imports: Map<string, [string, string]>;
}

function coreFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return coreFiles(p);
    return p.endsWith(".ts") && !p.endsWith(".test.ts") && !p.endsWith(".d.ts") ? [p] : [];
  });
}

const DEFINITION = /^(?:export\s+)?(?:async\s+)?(?:function\s*\*?\s*(\w+)|(?:const|let)\s+(\w+)\s*[:=]|class\s+(\w+))/;

function readSource(file: string): SourceFile {
  const lines = readFileSync(file, "utf8").split("\n");
  const definitions = new Map<string, Definition>();
  const imports = new Map<string, [string, string]>();
  let current: { name: string; lines: string[] } | null = null;
  const close = () => {
    if (current) definitions.set(current.name, { file, body: current.lines.join("\n") });
  };
  const text = lines.join("\n");
  for (const m of text.matchAll(/import\s+(?!type\b)([^;]*?)\s+from\s+"(\.[^"]+)"/g)) {
    const target = resolve(dirname(file), `${m[2]}.ts`);
    const clause = m[1] ?? "";
    const ns = clause.match(/\*\s+as\s+(\w+)/);
    if (ns?.[1]) imports.set(ns[1], [target, "*"]);
    for (const part of clause.match(/\{([^}]*)\}/)?.[1]?.split(",") ?? []) {
      const spec = part.trim().replace(/^type\s+/, "");
      if (!spec || part.trim().startsWith("type ")) continue;
      const [name, alias] = spec.split(/\s+as\s+/);
      if (name) imports.set((alias ?? name).trim(), [target, name.trim()]);
    }
  }
  for (const line of lines) {
    const m = DEFINITION.exec(line);
    if (m) {
      close();
      current = { name: (m[1] ?? m[2] ?? m[3]) as string, lines: [line] };
    } else current?.lines.push(line);
  }
  close();
  return { definitions, imports };
}

const sources = new Map(coreFiles(CORE).map((f) => [f, readSource(f)]));

/** The codes a definition can throw, following the calls it makes into other code of the core. */
function thrownCodes(file: string, name: string, seen = new Set<string>()): Set<ErrorCode> {
  const codes = new Set<ErrorCode>();
  const id = `${file}#${name}`;
  if (seen.has(id)) return codes;
  seen.add(id);
  const source = sources.get(file);
  const def = source?.definitions.get(name);
  if (!source || !def) return codes;
  for (const m of def.body.matchAll(/new AppError\(\s*"(\w+)"/g)) codes.add(m[1] as ErrorCode);
  for (const m of def.body.matchAll(/(?<![\w.$])(\w+)(?:\.(\w+))?\s*\(/g)) {
    const [callee, member] = [m[1] as string, m[2]];
    const imported = source.imports.get(callee);
    if (imported?.[1] === "*" && member) {
      for (const c of thrownCodes(imported[0], member, seen)) codes.add(c);
      continue;
    }
    if (imported && THROWERS[imported[1]] && imported[0].endsWith("manifest/errors.ts")) {
      codes.add(THROWERS[imported[1]] as ErrorCode);
      continue;
    }
    if (imported) for (const c of thrownCodes(imported[0], imported[1], seen)) codes.add(c);
    else if (callee !== name && source.definitions.has(callee)) for (const c of thrownCodes(file, callee, seen)) codes.add(c);
  }
  return codes;
}

/** Operation key (as in the manifest's `ops`) → where its handler is defined, read from the registry. */
function handlerLocations(): Map<string, [string, string]> {
  const registry = join(CORE, "registry.ts");
  const source = sources.get(registry);
  if (!source) throw new Error("no src/core/registry.ts");
  const out = new Map<string, [string, string]>();
  for (const m of readFileSync(registry, "utf8").matchAll(/^\s*(\w+):\s*(\w+)(?:\.(\w+))?,\s*$/gm)) {
    const [key, first, second] = [m[1] as string, m[2] as string, m[3]];
    const imported = source.imports.get(first);
    if (imported?.[1] === "*" && second) out.set(key, [imported[0], second]);
    else if (imported) out.set(key, imported);
  }
  return out;
}

describe("declared errors", () => {
  const locations = handlerLocations();
  const operations: [string, Operation][] = Object.entries(ops);

  test("the tracer finds every handler and the codes thrown in it", () => {
    const missing = operations.filter(([key]) => !locations.has(key)).map(([key]) => key);
    expect(missing).toEqual([]);
    // A known throw, to prove the tracer reads through the helpers.
    const [file, name] = locations.get("deleteProject") ?? ["", ""];
    expect([...thrownCodes(file, name)].sort()).toEqual(["conflict", "forbidden", "not_found", "precondition_failed"]);
  });

  test("every handler throws only codes its operation can answer, and the OpenAPI document lists", () => {
    const undeclared: string[] = [];
    for (const [key, op] of operations) {
      const [file, name] = locations.get(key) ?? ["", ""];
      const answerable = new Set(answerableErrors(op, true));
      for (const code of thrownCodes(file, name)) {
        if (!(code in ERROR_TABLE)) undeclared.push(`${op.name}: unknown code ${code}`);
        else if (!answerable.has(code)) undeclared.push(`${op.name} (${relative(ROOT, file)} ${name}) can throw ${code}`);
      }
    }
    expect(undeclared).toEqual([]);
  });
});
