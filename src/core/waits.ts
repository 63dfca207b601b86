// Long-polls (`?wait=N` on runs, group runs and generations): a read that answers as soon as what it reads has
// ended. Waiters hold no database connection while they wait: they sleep until the core says a run or generation
// they follow has ended, or until the fallback check sees the database change (which also catches a change made
// by another process), and only then look again.
import type { EventEmitter } from "node:events";
import type { CoreEvents } from "./context";
import type { ChangeFeed } from "./storage";

/** The most requests waiting at once in one process, and from one workspace: past either, a wait answers at once. */
export const MAX_WAITERS = 1000;
export const MAX_WAITERS_PER_WORKSPACE = 100;
/** How often waiters look again when the database changed without a signal (another process, say). */
const FALLBACK_CHECK_MS = 500;

interface Waiter {
  workspaceId: string;
  keys: string[];
  wake(): void;
}

export interface WaitRequest {
  workspaceId: string;
  /** Ids whose end may end the wait: a run's, a group run's runs', a generation's. */
  keys: string[];
  seconds: number;
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
  /** True once what is read has ended (a cheap read: it runs on every wake-up). */
  settled(): Promise<boolean>;
}

export class StateWaits {
  private readonly byKey = new Map<string, Set<Waiter>>();
  private readonly all = new Set<Waiter>();
  private readonly perWorkspace = new Map<string, number>();
  private fallback: ReturnType<typeof setInterval> | null = null;
  private seenVersion = "";
  private closed = false;

  constructor(
    private readonly events: EventEmitter<CoreEvents>,
    private readonly changes: ChangeFeed,
    private readonly limits = { total: MAX_WAITERS, perWorkspace: MAX_WAITERS_PER_WORKSPACE },
  ) {
    events.on("runsFinished", this.onKeys);
    events.on("runCancelled", this.onKey);
    events.on("generationFinished", this.onKey);
    events.on("generationCancelled", this.onKey);
  }

  private readonly onKey = (id: string) => this.wakeKey(id);
  private readonly onKeys = (ids: string[]) => {
    for (const id of ids) this.wakeKey(id);
  };

  private wakeKey(id: string): void {
    const set = this.byKey.get(id);
    if (set) for (const w of set) w.wake();
  }

  /** Requests waiting now. */
  get size(): number {
    return this.all.size;
  }

  /**
   * Resolves when `settled()` holds, after `seconds`, when the client goes away or when the waits close (server
   * shutdown) — whichever comes first. Past the bounds, or after close, it resolves at once: the caller then
   * answers the current state, as a plain read would.
   */
  async until(req: WaitRequest): Promise<void> {
    if (this.closed || req.seconds <= 0 || req.signal?.aborted) return;
    const mine = this.perWorkspace.get(req.workspaceId) ?? 0;
    if (this.all.size >= this.limits.total || mine >= this.limits.perWorkspace) return;
    let wake: () => void = () => {};
    let woken = new Promise<void>((r) => {
      wake = r;
    });
    let ended = false;
    let end: () => void = () => {};
    const over = new Promise<void>((r) => {
      end = () => {
        ended = true;
        r();
      };
    });
    const waiter: Waiter = { workspaceId: req.workspaceId, keys: req.keys, wake: () => wake() };
    const timer = setTimeout(end, req.seconds * 1000);
    req.signal?.addEventListener("abort", end, { once: true });
    this.add(waiter, end);
    try {
      for (;;) {
        await Promise.race([woken, over]);
        if (ended) return;
        woken = new Promise<void>((r) => {
          wake = r;
        });
        if (await req.settled()) return;
      }
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", end);
      this.remove(waiter);
    }
  }

  private readonly enders = new Map<Waiter, () => void>();

  private add(w: Waiter, end: () => void): void {
    this.all.add(w);
    this.enders.set(w, end);
    this.perWorkspace.set(w.workspaceId, (this.perWorkspace.get(w.workspaceId) ?? 0) + 1);
    for (const k of w.keys) {
      let set = this.byKey.get(k);
      if (!set) {
        set = new Set();
        this.byKey.set(k, set);
      }
      set.add(w);
    }
    if (this.fallback === null) {
      this.seenVersion = this.changes.version();
      this.fallback = setInterval(() => this.fallbackCheck(), FALLBACK_CHECK_MS);
    }
  }

  private remove(w: Waiter): void {
    if (!this.all.delete(w)) return;
    this.enders.delete(w);
    const n = (this.perWorkspace.get(w.workspaceId) ?? 1) - 1;
    if (n > 0) this.perWorkspace.set(w.workspaceId, n);
    else this.perWorkspace.delete(w.workspaceId);
    for (const k of w.keys) {
      const set = this.byKey.get(k);
      set?.delete(w);
      if (set?.size === 0) this.byKey.delete(k);
    }
    if (this.all.size === 0 && this.fallback !== null) {
      clearInterval(this.fallback);
      this.fallback = null;
    }
  }

  /** A change no signal told of (another process's, or a path that raises none): every waiter looks again. */
  private fallbackCheck(): void {
    this.changes.refreshExternal();
    const v = this.changes.version();
    if (v === this.seenVersion) return;
    this.seenVersion = v;
    for (const w of this.all) w.wake();
  }

  /** Ends every wait (each answers what it reads now) and refuses new ones: the server is shutting down. */
  close(): void {
    this.closed = true;
    for (const end of [...this.enders.values()]) end();
    this.events.off("runsFinished", this.onKeys);
    this.events.off("runCancelled", this.onKey);
    this.events.off("generationFinished", this.onKey);
    this.events.off("generationCancelled", this.onKey);
  }
}
