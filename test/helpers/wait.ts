// Waiting in tests for something another process or pipe makes true (a log line arriving, a process gone).

/** Checks `done` every `everyMs` until it holds or `ms` have passed; says whether it held. The caller then asserts
 * on what it sees, so a failure shows the actual state rather than a timeout. */
export async function waitUntil(done: () => boolean, ms: number, everyMs = 10): Promise<boolean> {
  const until = Date.now() + ms;
  while (!done()) {
    if (Date.now() >= until) return false;
    await Bun.sleep(everyMs);
  }
  return true;
}

/** As waitUntil, for a check that has to ask (the database, a server). */
export async function waitUntilAsync(done: () => Promise<boolean>, ms: number, everyMs = 20): Promise<boolean> {
  const until = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() >= until) return false;
    await Bun.sleep(everyMs);
  }
  return true;
}
