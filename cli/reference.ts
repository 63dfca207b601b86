// The command reference in docs/cli.md, generated from the command tree (itself derived from the manifest).
// Regenerate: bun cli/reference.ts --write
import { Command } from "commander";
import { registerCli } from "./index";

export const BEGIN = "<!-- BEGIN GENERATED: svc command reference (bun cli/reference.ts --write) -->";
export const END = "<!-- END GENERATED -->";

function leaves(cmd: Command, path: string[] = []): { path: string[]; cmd: Command }[] {
  const subs = cmd.commands.filter((c) => c.name() !== "help");
  if (subs.length === 0) return path.length ? [{ path, cmd }] : [];
  return subs.flatMap((c) => leaves(c, [...path, c.name()]));
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function cliReference(): string {
  const program = new Command("svc");
  registerCli(program);
  const rows = leaves(program).map(({ path, cmd }) => {
    const args = cmd.registeredArguments.map((a) => ` <${a.name()}>`).join("");
    const opts = cmd.options.filter((o) => !["--json", "--server", "--help"].includes(o.long ?? "")).map((o) => `\`${o.flags}\``);
    return `| \`svc ${path.join(" ")}${args}\` | ${cell(cmd.description())} | ${opts.join(" ") || "-"} |`;
  });
  return [BEGIN, "", "| command | what it does | options (besides `--json`, `--server`) |", "| --- | --- | --- |", ...rows, "", END].join("\n");
}

export function withReference(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error("docs/cli.md has no generated-reference markers");
  return doc.slice(0, start) + cliReference() + doc.slice(end + END.length);
}

if (import.meta.main && process.argv.includes("--write")) {
  const path = `${import.meta.dir}/../docs/cli.md`;
  await Bun.write(path, withReference(await Bun.file(path).text()));
  console.log(`updated ${path}`);
} else if (import.meta.main) {
  console.log(cliReference());
}
