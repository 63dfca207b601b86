// Where runs execute: the seam between who claims runs (the server's engine, a remote runner) and what executes
// them. The in-process executor runs them on this thread; the worker pool runs them in worker processes.
import { SharedBrowser } from "./chromium";
import { type ExecuteDeps, executeRun, type JobResult, type RunJob } from "./execute-run";

export type ExecuteOptions = Omit<ExecuteDeps, "browser">;

export interface RunExecutor {
  /** Runs the job to its outcome; resolves (never rejects) once it is over, also when it was cancelled. */
  execute(job: RunJob, options: ExecuteOptions): Promise<JobResult>;
  /** Stops what it started (browsers, processes); runs still executing are aborted. */
  close(): Promise<void>;
}

export class InProcessExecutor implements RunExecutor {
  private readonly browser: SharedBrowser;

  constructor(browserPath: string | undefined) {
    this.browser = new SharedBrowser(browserPath);
  }

  execute(job: RunJob, options: ExecuteOptions): Promise<JobResult> {
    return executeRun(job, { ...options, browser: this.browser });
  }

  close(): Promise<void> {
    return this.browser.close();
  }
}
