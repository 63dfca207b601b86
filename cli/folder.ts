// What svc apply, svc test and svc pull share: the folder of documents they read, and the project they act on.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { type CommonFlags, settingsFor } from "./session";
import { UsageError } from "./usage";

export const DOCUMENT = /\.(ya?ml|json)$/i;

/** Every document below `dir` (hidden folders and node_modules skipped), by path relative to it with `/`. */
export function readFolder(dir: string): { path: string; text: string }[] {
  let top: ReturnType<typeof statSync>;
  try {
    top = statSync(dir);
  } catch {
    throw new UsageError(`${dir} does not exist`);
  }
  if (!top.isDirectory()) throw new UsageError(`${dir} is not a folder`);
  const out: { path: string; text: string }[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      const full = join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile() && DOCUMENT.test(e.name)) out.push({ path: relative(dir, full).split(sep).join("/"), text: readFileSync(full, "utf8") });
    }
  };
  walk(dir);
  return out;
}

/** The project a command acts on (--project, SVC_PROJECT or .svc.json), with the settings it was found in. */
export function projectOf(flags: CommonFlags) {
  const settings = settingsFor(flags);
  if (!settings.project) throw new UsageError('no project: pass --project, set SVC_PROJECT, or add "project" to .svc.json');
  return { settings, project: settings.project.value };
}
