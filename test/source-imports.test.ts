// What the source tree's imports must not do. No runtime import cycles: a cycle makes a module's exports
// undefined while the cycle is still loading, depending on which file happened to be imported first (type-only
// imports do not count). And the HTTP layer's response cache knows nothing of the database.
import { expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { Glob } from "bun";

const ROOT = resolve(import.meta.dir, "..");
const FOLDERS = ["src", "cli", "mcp", "config"];
const transpilers = { ts: new Bun.Transpiler({ loader: "ts" }), tsx: new Bun.Transpiler({ loader: "tsx" }) };

function resolveImport(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  return [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`].find((p) => existsSync(p) && statSync(p).isFile());
}

/** Each source file and the files it imports at run time. */
async function importGraph(): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  for (const folder of FOLDERS) {
    for (const file of new Glob("**/*.{ts,tsx}").scanSync({ cwd: `${ROOT}/${folder}`, absolute: true })) {
      if (file.endsWith(".d.ts")) continue;
      const code = (await Bun.file(file).text()).replace(/^#!.*/, "");
      const transpiler = file.endsWith(".tsx") ? transpilers.tsx : transpilers.ts;
      const deps = transpiler
        .scanImports(code)
        .filter((i) => i.path.startsWith("."))
        .map((i) => resolveImport(file, i.path))
        .filter((p): p is string => p !== undefined);
      graph.set(file, deps);
    }
  }
  return graph;
}

function findCycles(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    stack.push(node);
    for (const dep of graph.get(node) ?? []) {
      const s = state.get(dep);
      if (s === "open") cycles.push([...stack.slice(stack.indexOf(dep)), dep]);
      else if (s === undefined) visit(dep);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

test("no source file imports itself at run time through a chain of other files", async () => {
  const graph = await importGraph();
  expect(graph.size).toBeGreaterThan(100);
  const cycles = findCycles(graph).map((c) => c.map((f) => relative(ROOT, f)).join(" -> "));
  expect(cycles).toEqual([]);
});

test("the response cache imports nothing from src/db, not even types: it learns of changes through the core", async () => {
  const file = `${ROOT}/src/http/response-cache.ts`;
  const specifiers = [...(await Bun.file(file).text()).matchAll(/^\s*(?:import|export)\b[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1] ?? "");
  expect(specifiers.length).toBeGreaterThan(0);
  const intoDb = specifiers.filter((spec) => relative(`${ROOT}/src/db`, resolve(dirname(file), spec)).split("/")[0] !== "..");
  expect(intoDb).toEqual([]);
});

test("each manifest file of operations matches a core folder that handles every operation it declares", async () => {
  const checked: string[] = [];
  for (const file of new Glob("*.ts").scanSync({ cwd: `${ROOT}/src/manifest` })) {
    if (file.endsWith(".test.ts")) continue;
    const declared = Object.entries(await import(`${ROOT}/src/manifest/${file}`)).filter(
      ([, v]) => typeof v === "object" && v !== null && "method" in v && "path" in v && "cli" in v,
    );
    if (declared.length === 0) continue;
    const folder = `${ROOT}/src/core/${file.replace(/\.ts$/, "")}`;
    expect({ file, folder: existsSync(folder) }).toEqual({ file, folder: true });
    const handlers = new Set<string>();
    for (const mod of new Glob("*.ts").scanSync({ cwd: folder })) {
      if (mod.endsWith(".test.ts") || mod.endsWith(".d.ts")) continue;
      for (const [name, value] of Object.entries(await import(`${folder}/${mod}`))) if (typeof value === "function") handlers.add(name);
    }
    for (const [key] of declared) expect({ file, operation: key, handled: handlers.has(key) }).toEqual({ file, operation: key, handled: true });
    checked.push(file);
  }
  expect(checked.length).toBeGreaterThan(5);
});

test("the CLI imports nothing from src/commands (the admin commands): its UsageError is its own", async () => {
  const fromCommands: string[] = [];
  for (const file of new Glob("**/*.ts").scanSync({ cwd: `${ROOT}/cli`, absolute: true })) {
    for (const m of (await Bun.file(file).text()).matchAll(/from\s+"([^"]+)"/g)) {
      if (resolve(dirname(file), m[1] ?? "").startsWith(`${ROOT}/src/commands`)) fromCommands.push(`${relative(ROOT, file)}: ${m[1]}`);
    }
  }
  expect(fromCommands).toEqual([]);
});
