// Whether a process svc noted (its id in a file) still runs as the svc command that wrote the note, not as
// another process that got the id of one killed without removing it.
import { readFileSync } from "node:fs";

/** A process with this id exists (signal 0 sends nothing) and, where /proc tells, has `word` among its arguments. */
export function svcProcessAlive(pid: number, word: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    // EPERM: it exists, as another user.
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  let args: string[];
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return true;
  }
  return args.includes(word);
}
