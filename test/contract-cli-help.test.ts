// `svc --help` for every command of the tree (derived from the manifest, walked here): a reviewed snapshot, so
// the CLI cannot change unreviewed. Accept a reviewed change with `bun test --update-snapshots`.
import { expect, test } from "bun:test";
import type { Command } from "commander";
import { registerCli } from "../cli/index";
import { buildProgram } from "../src/main";

/** The full `--help` text of a command, as `svc <words> --help` prints it, at a fixed width and without colour. */
function helpOf(cmd: Command): string {
  let out = "";
  cmd.configureOutput({
    writeOut: (s) => (out += s),
    writeErr: (s) => (out += s),
    getOutHelpWidth: () => 100,
    getErrHelpWidth: () => 100,
    getOutHasColors: () => false,
    getErrHasColors: () => false,
  });
  cmd.outputHelp();
  return out;
}

function walk(cmd: Command, words: string[], into: Record<string, string>): void {
  into[["svc", ...words].join(" ")] = helpOf(cmd);
  for (const sub of cmd.commands) walk(sub, [...words, sub.name()], into);
}

test("svc --help of every command matches its reviewed snapshot", () => {
  const program = buildProgram();
  registerCli(program);
  const helps: Record<string, string> = {};
  walk(program, [], helps);
  expect(Object.keys(helps).length).toBeGreaterThan(40);
  for (const [command, text] of Object.entries(helps)) {
    expect(text).not.toContain(process.env.HOME ?? "/nonexistent-home");
    expect(`$ ${command} --help\n${text}`).toMatchSnapshot(command);
  }
});
