// Builds the single executable dist/svc (bytecode, ESM, minified, .env not auto-loaded).
// `bun run build -- --cross` also builds svc-linux-x64, svc-linux-arm64 and svc-darwin-arm64 when possible.
import { mkdirSync } from "node:fs";
import type { BunPlugin } from "bun";

/** playwright-core reads its package.json and browsers.json through computed paths that do not exist
 * inside a compiled binary; rewrite them into static requires so the bundler embeds them. */
const playwrightStaticRequires: BunPlugin = {
  name: "playwright-static-requires",
  setup(build) {
    build.onLoad({ filter: /playwright-core[\\/]lib[\\/].*\.js$/ }, async (args) => {
      let text = await Bun.file(args.path).text();
      const before = text;
      text = text
        .replace(/require\(\s*path\.join\(\s*__dirname\s*,\s*["']\.\.["']\s*,\s*["']package\.json["']\s*\)\s*\)/g, 'require("../package.json")')
        .replace(
          /require\(\s*path\.join\(\s*__dirname\s*,\s*["']\.\.["']\s*,\s*["']\.\.["']\s*,\s*["']package\.json["']\s*\)\s*\)/g,
          'require("../../package.json")',
        )
        .replace(
          /require\(\s*path\.join\(\s*__dirname\s*,\s*["']\.\.["']\s*,\s*["']\.\.["']\s*,\s*["']browsers\.json["']\s*\)\s*\)/g,
          'require("../../browsers.json")',
        )
        .replace(/require\(\s*path\.join\(\s*__dirname\s*,\s*["']\.\.["']\s*,\s*["']browsers\.json["']\s*\)\s*\)/g, 'require("../browsers.json")');
      return text === before ? undefined : { contents: text, loader: "js" };
    });
  },
};

type Target = "bun-linux-x64" | "bun-linux-arm64" | "bun-darwin-arm64";

export async function buildExecutable(outfile: string, target?: Target): Promise<void> {
  const result = await Bun.build({
    // The reader's thread (src/reader-thread.ts starts it) is an entry point of its own.
    entrypoints: ["src/main.ts", "src/reader-worker.ts"],
    compile: { outfile, autoloadDotenv: false, autoloadBunfig: false, ...(target ? { target } : {}) },
    bytecode: true,
    format: "esm",
    minify: true,
    sourcemap: "none",
    plugins: [playwrightStaticRequires],
    define: { "process.env.SVC_COMPILED": '"1"' },
  } as Parameters<typeof Bun.build>[0]);
  if (!result.success) {
    for (const m of result.logs) console.error(m);
    throw new Error(`build of ${outfile} failed`);
  }
}

if (import.meta.main) {
  mkdirSync("dist", { recursive: true });
  const started = performance.now();
  await buildExecutable("dist/svc");
  console.log(`built dist/svc in ${Math.round(performance.now() - started)} ms`);
  if (process.argv.includes("--cross")) {
    const targets: [Target, string][] = [
      ["bun-linux-x64", "svc-linux-x64"],
      ["bun-linux-arm64", "svc-linux-arm64"],
      ["bun-darwin-arm64", "svc-darwin-arm64"],
    ];
    for (const [t, name] of targets) {
      try {
        await buildExecutable(`dist/${name}`, t);
        console.log(`built dist/${name}`);
      } catch (e) {
        console.error(`skipped ${name}: ${(e as Error).message}`);
      }
    }
  }
}
