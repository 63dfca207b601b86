// WAL checkpoints on a thread of their own, for `svc serve`. SQLite copies the write-ahead log back into the
// database file (and syncs it) on the connection whose commit crosses wal_autocheckpoint: the API's one thread,
// ~10 ms of it every few megabytes written (a group run of a thousand checks writes several), in the middle of
// whatever request or run outcome made that commit. Here a thread with a connection of its own checkpoints the log
// every CHECKPOINT_EVERY_MS instead (PASSIVE: it never waits for, nor blocks, a writer or a reader), and the serving
// connection checkpoints only past SAFETY_NET_PAGES, should the thread fall behind or be gone.
import type { Database } from "bun:sqlite";
import { log } from "../logging";

const CHECKPOINT_EVERY_MS = 250;
/** SQLite's own default is 1000 pages (~4 MB): this is for the thread falling behind, not for the usual case. */
export const SAFETY_NET_PAGES = 8000;
const DEFAULT_PAGES = 1000;
const CLOSE_WAIT_MS = 2_000;

// The thread's code, as a module of its own: from source and in the compiled executable alike, without a file to find.
const THREAD = `import { Database } from "bun:sqlite";
let db = null;
let timer = null;
const checkpoint = () => {
  try {
    const r = db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    if (r && r.checkpointed > 0) postMessage({ t: "checkpointed", frames: r.checkpointed, log: r.log });
  } catch (e) {
    postMessage({ t: "failed", error: String(e && e.message ? e.message : e) });
  }
};
self.onmessage = (e) => {
  const m = e.data;
  if (m.t === "open") {
    db = new Database(m.path);
    db.exec("PRAGMA busy_timeout = 0");
    timer = setInterval(checkpoint, m.everyMs);
    postMessage({ t: "open" });
  } else if (m.t === "close") {
    if (timer) clearInterval(timer);
    db?.close();
    db = null;
    postMessage({ t: "closed" });
  }
};`;

type FromThread = { t: "open" } | { t: "closed" } | { t: "checkpointed"; frames: number; log: number } | { t: "failed"; error: string };

export class BackgroundCheckpoints {
  private readonly thread: Worker;
  private closed: (() => void) | null = null;
  private closing = false;
  private failures = 0;
  /** Checkpoints that copied frames, and how many frames they copied (for tests and diagnostics). */
  readonly stats = { checkpoints: 0, frames: 0 };

  constructor(
    private readonly sqlite: Database,
    path: string,
  ) {
    this.thread = new Worker(URL.createObjectURL(new Blob([THREAD], { type: "application/javascript" })));
    // A server with nothing else to do may stop: the thread does not hold it.
    (this.thread as unknown as { unref(): void }).unref();
    this.thread.onmessage = (e: MessageEvent<FromThread>) => this.receive(e.data);
    this.thread.onerror = (e) => this.lost(e.message);
    sqlite.exec(`PRAGMA wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
    this.thread.postMessage({ t: "open", path, everyMs: CHECKPOINT_EVERY_MS });
  }

  private receive(m: FromThread): void {
    if (m.t === "checkpointed") {
      this.failures = 0;
      this.stats.checkpoints++;
      this.stats.frames += m.frames;
    } else if (m.t === "failed") {
      // The next turn tries again; a file that cannot be checkpointed at all is the serving connection's to meet.
      if (++this.failures === 3) log.warn("the database's log cannot be checkpointed in the background; svc serve does it itself", { error: m.error });
      if (this.failures >= 3 && !this.closing) this.sqlite.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_PAGES}`);
    } else if (m.t === "closed") this.closed?.();
  }

  private lost(why: string): void {
    if (this.closing) return;
    log.warn("the database's checkpoint thread stopped; svc serve checkpoints itself", { error: why });
    this.sqlite.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_PAGES}`);
    this.closed?.();
  }

  /** Closes the thread's connection first, so that the serving connection, the last, checkpoints and removes the log. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, CLOSE_WAIT_MS);
      this.closed = () => {
        clearTimeout(t);
        resolve();
      };
      this.thread.postMessage({ t: "close" });
    });
    this.thread.terminate();
  }
}
