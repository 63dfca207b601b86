// Which workspaces and projects each remote runner served, and how recently: its claims break a tie between equal
// turns in favour of the one it served least recently, so that its turns go round as the server's own engine's do.
//
// Why it is needed: turns count the runs running (rankedInTurns in sqlite.ts). The engine claims for a freed slot
// before the run that freed it is written (outcomes are batched), so that run still counts as its workspace's turn
// and another workspace's run goes next. A runner sends the finished run first and claims after, so the workspace
// it just served has one run fewer running, ties with the one waiting, and won every tie by age: with one slot, a
// backlog queued first took every turn. Kept in the server's memory (a tie-break only): after a restart, or for a
// runner whose claims reach several nodes, a tie may go by age once more, never out of turn.

/** Workspaces and projects remembered per runner; the least recently served are forgotten first. */
const REMEMBERED = 512;

export class RunnerServed {
  private readonly byRunner = new Map<string, Map<string, number>>();
  private claims = 0;

  /** What a claim statement reads: `{id: n}` for the workspaces and projects the runner served, larger n more recent. */
  of(runnerId: string): string {
    const served = this.byRunner.get(runnerId);
    return served ? JSON.stringify(Object.fromEntries(served)) : "{}";
  }

  /** Notes one claim of the runner: the workspaces and projects of the runs it took. */
  note(runnerId: string, ids: Iterable<string>): void {
    let served = this.byRunner.get(runnerId);
    if (!served) {
      served = new Map();
      this.byRunner.set(runnerId, served);
    }
    const claim = ++this.claims;
    for (const id of ids) {
      // Most recently served last: Map keeps insertion order, so the first is the one to forget.
      served.delete(id);
      served.set(id, claim);
    }
    while (served.size > REMEMBERED) served.delete(served.keys().next().value as string);
  }
}
