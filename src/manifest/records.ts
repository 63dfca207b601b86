// The records the API returns, as zod schemas (also their OpenAPI components).
import { z } from "zod";
import { NullableTimestamp, Timestamp } from "./define";
import { AutomationKind, Step } from "./automation-format";

const stamped = { id: z.string(), created_at: Timestamp, updated_at: Timestamp };

/** How many projects get_dashboard shows, and how many of their latest runs. */
export const DASHBOARD_PROJECTS = 50;
export const DASHBOARD_RECENT_RUNS = 10;

export const Role = z.enum(["owner", "admin", "member"]);

export const Project = z
  .object({
    ...stamped,
    slug: z.string(),
    name: z.string(),
    description: z.string(),
    has_openapi: z.boolean(),
    openapi: z.record(z.string(), z.unknown()).nullable().optional().describe("Only in get_project"),
  })
  .meta({ id: "Project" });

export const Environment = z
  .object({
    ...stamped,
    project_id: z.string(),
    name: z.string(),
    variables: z.record(z.string(), z.string()),
    secret_names: z.array(z.string()).describe("Secrets are write-only: only their names are returned"),
    protected: z.boolean().describe("Only owners and admins may change a protected environment or start runs in it"),
    allowed_hosts: z.array(z.string()).nullable().describe("In a protected environment, the hosts its secrets may be sent to; null: the host of its BASE_URL"),
    runner_labels: z.array(z.string()).describe("Only runners having all these labels run this environment's runs; the server's own engine has none"),
    key: z.string().nullable().describe("The identity `svc apply` gave it within the project (null: not applied)"),
  })
  .meta({ id: "Environment" });

export const FeatureTarget = z
  .discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("web"), url: z.string().min(1).max(4000) }),
    z.strictObject({
      kind: z.literal("api"),
      tags: z.array(z.string().max(200)).max(100).default([]),
      paths: z.array(z.string().max(1000)).max(100).default([]),
    }),
  ])
  .meta({ id: "FeatureTarget" });

export const GenerationStatus = z.enum(["queued", "running", "succeeded", "failed", "cancelled"]);
export const Feature = z
  .object({
    ...stamped,
    project_id: z.string(),
    name: z.string(),
    description: z.string(),
    acceptance_criteria: z.string(),
    target: FeatureTarget.nullable(),
    latest_generation: z
      .object({ id: z.string(), status: GenerationStatus })
      .nullable()
      .describe("The feature's most recent generation (get_generation reads it whole); null before the first"),
  })
  .meta({ id: "Feature" });

export const Strategy = z.enum(["auto", "gherkin", "openapi", "crawl", "llm"]);
export const GenerationWarning = z
  .object({
    message: z.string(),
    generator: z.string().optional(),
    scenario: z.string().optional(),
    line: z.number().int().optional(),
    text: z.string().optional(),
    suggestion: z.string().optional(),
  })
  .meta({ id: "GenerationWarning" });

export const Generation = z
  .object({
    ...stamped,
    project_id: z.string(),
    feature_id: z.string(),
    status: GenerationStatus,
    strategy: Strategy,
    progress: z.object({ stage: z.string(), done: z.number().int(), total: z.number().int() }),
    warnings: z.array(GenerationWarning),
    automation_ids: z.array(z.string()),
    result: z.string().nullable().describe("What the job did, in a sentence"),
    error: z.string().nullable(),
    started_at: NullableTimestamp,
    finished_at: NullableTimestamp,
  })
  .meta({ id: "Generation" });

export const AutomationStatus = z.enum(["draft", "active", "disabled"]);
export const RunStatus = z.enum(["queued", "running", "passed", "failed", "error", "timed_out", "cancelled"]);
/** Where a run was started from. */
export const RunTrigger = z.enum(["api", "cli", "mcp", "web", "schedule", "assistant", "test"]);
export const AutomationSource = z.enum(["manual", "generated", "applied", "imported"]);
export const TERMINAL_RUN_STATUSES = ["passed", "failed", "error", "timed_out", "cancelled"] as const;
/** The ends that are a failure (a quarantined automation's are reported apart: they do not fail its group run). */
export const FAILED_RUN_STATUSES: readonly string[] = ["failed", "error", "timed_out"];
/**
 * A run whose failure is reported apart: its automation is quarantined and it did not pass. It does not fail its
 * group run (the verdict, the alerts, the CLI's exit code) and JUnit and the web app show it as quarantined.
 */
export const setApart = (run: { status: string; quarantined?: boolean }) => run.quarantined === true && FAILED_RUN_STATUSES.includes(run.status);
export const TERMINAL_GENERATION_STATUSES = ["succeeded", "failed", "cancelled"] as const;

const PassRate = z.number().min(0).max(1).nullable().describe("Share of the runs that passed, 0–1; null without runs");

export const History = z
  .object({
    days: z.number().int(),
    runs: z.number().int().describe("Finished runs (cancelled runs are not counted)"),
    passed: z.number().int(),
    failed: z.number().int().describe("Runs that failed, errored or timed out"),
    pass_rate: PassRate,
    p50_ms: z.number().nullable().describe("Median duration in ms (within 2.5%); null without runs"),
    p95_ms: z.number().nullable().describe("95th percentile duration in ms (within 2.5%); null without runs"),
    daily: z
      .array(
        z.object({
          date: z.string().describe("YYYY-MM-DD (UTC)"),
          runs: z.number().int(),
          passed: z.number().int(),
          failed: z.number().int(),
          pass_rate: PassRate,
          p50_ms: z.number().nullable(),
        }),
      )
      .describe("One entry per day, oldest first, days without runs included"),
  })
  .meta({ id: "History" });

export const HealthState = z
  .enum(["passing", "failing", "flaky", "unknown"])
  .describe("unknown: no finished run yet; flaky: a recent run passed only after a retry, or the status flipped often lately; else the latest run's verdict");

export const AutomationHealth = z
  .object({
    state: HealthState,
    last_status: RunStatus.nullable().describe("The latest finished run's status (cancelled runs are not counted)"),
    runs: z.number().int().describe("Finished runs counted for pass_rate: the latest ones, up to the configured window (history.window_runs)"),
    pass_rate: z.number().nullable().describe("Share of those runs that passed, 0–1; null without runs"),
    flips: z.number().int().describe("Status changes between passing and not passing among those runs"),
    runs_7d: z.number().int().describe("Finished runs in the last 7 days"),
    pass_rate_7d: z.number().nullable().describe("Share of the last 7 days' runs that passed, 0–1; null without runs"),
  })
  .meta({ id: "AutomationHealth" });

export const Automation = z
  .object({
    ...stamped,
    project_id: z.string(),
    feature_id: z.string().nullable(),
    generation_id: z.string().nullable(),
    name: z.string(),
    description: z.string(),
    kind: AutomationKind,
    steps: z.array(Step),
    environment_id: z.string().nullable(),
    tags: z.array(z.string()),
    status: AutomationStatus,
    source: AutomationSource,
    key: z.string().nullable().describe("The identity `svc apply` gave it within the project (null: not applied)"),
    timeout_ms: z.number().int(),
    retries: z.number().int(),
    last_run: z.object({ id: z.string(), status: RunStatus, at: Timestamp }).nullable(),
    quarantined: z.boolean().describe("True: it still runs, but its failures do not fail its group run or the CLI's exit code (reported apart)"),
    health: AutomationHealth,
  })
  .meta({ id: "Automation" });

export const GroupMode = z
  .enum(["parallel", "sequential"])
  .describe("parallel: all runs queued at once; sequential: one at a time in the group's order, the next queued when the previous ends");
const StringRecord = z.record(z.string(), z.string());

export const Group = z
  .object({
    ...stamped,
    project_id: z.string(),
    name: z.string(),
    description: z.string(),
    automation_ids: z.array(z.string()),
    key: z.string().nullable().describe("The identity `svc apply` gave it within the project (null: not applied)"),
    mode: GroupMode,
    stop_on_failure: z.boolean().describe("Sequential groups: stop at the first run that does not pass (the rest end cancelled, not run)"),
  })
  .meta({ id: "Group" });

export const AssertionResult = z
  .object({
    assertion: z.string().describe("The assertion in short, e.g. status == 200"),
    subject: z.string().optional().describe("What was checked: status, a JSON path ($.price), header NAME, body or duration_ms"),
    operator: z
      .string()
      .optional()
      .describe("How it was compared: ==, !=, <, <=, >, >=, contains, matches, is (a type), exists, does not exist or matches schema"),
    passed: z.boolean(),
    expected: z.unknown().optional(),
    actual: z.unknown().optional(),
    message: z.string(),
  })
  .meta({ id: "AssertionResult" });

export const StepResult = z
  .object({
    index: z.number().int(),
    name: z.string(),
    status: z.enum(["passed", "failed", "error", "skipped"]),
    duration_ms: z.number(),
    message: z.string().nullable(),
    assertions: z.array(AssertionResult).optional(),
    request: z.object({ method: z.string(), url: z.string(), headers: z.record(z.string(), z.string()).optional(), body: z.string().optional() }).optional(),
    response: z.object({ status: z.number().int(), headers: z.record(z.string(), z.string()), body: z.string(), truncated: z.boolean() }).optional(),
    artifacts: z.array(z.string()).optional(),
  })
  .meta({ id: "StepResult" });

export const StartedBy = z
  .object({
    kind: z
      .enum(["user", "key", "schedule", "assistant", "operator"])
      .describe("user: a person in the web app; key: an API key (CLI, API, MCP); schedule; assistant: the in-app assistant for a person; operator: svc admin"),
    name: z.string().describe("The person's email, the key's name, the schedule's name (as they were when it started)"),
  })
  .nullable()
  .describe("Who or what started it; null for runs started before this was kept")
  .meta({ id: "StartedBy" });

export const RunSummary = z.object({
  steps: z.number().int(),
  passed: z.number().int(),
  failed: z.number().int(),
  skipped: z.number().int(),
});

export const Run = z
  .object({
    ...stamped,
    project_id: z.string(),
    automation_id: z.string(),
    automation_name: z.string(),
    group_run_id: z.string().nullable(),
    environment_id: z.string().nullable(),
    trigger: RunTrigger,
    schedule_id: z.string().nullable().describe("The schedule that started the run (trigger schedule), else null"),
    started_by: StartedBy,
    status: RunStatus,
    started_at: NullableTimestamp,
    finished_at: NullableTimestamp,
    duration_ms: z.number().nullable(),
    summary: RunSummary,
    error: z.string().nullable(),
    attempts: z
      .array(
        z.object({
          attempt: z.number().int(),
          status: RunStatus,
          error: z.string().nullable(),
          message: z
            .string()
            .nullable()
            .describe("What went wrong in this attempt in one line (its failed step, expected and actual, or its error); null when it passed"),
          duration_ms: z.number(),
        }),
      )
      .describe("Every attempt the run took, in order (more than one when the automation has retries)"),
    max_attempts: z.number().int().describe("How many attempts the run may take: the automation's retries + 1"),
    flaky: z.boolean().describe("True when the run passed only after a failed attempt: its status is passed, and attempts say which attempt passed"),
    quarantined: z.boolean().describe("True when its automation was quarantined as it was queued: its failure does not fail its group run"),
    variables: StringRecord.describe("The per-run variables it was started with (overriding its environment's)"),
    one_run_secrets: z.array(z.string()).describe("Names of the one-run secrets it was started with (their values are never stored or shown)"),
    metadata: StringRecord.describe("CI metadata it was started with (commit, branch, build_url, pr, …)"),
    runner: z
      .object({
        id: z.string().describe("Runner id (rnr_…)"),
        name: z.string().nullable().describe("Its name (null if the runner was deleted since)"),
      })
      .nullable()
      .describe("The runner (svc runner) that executes or executed it; null when a server's own engine did, or it has not started"),
    steps: z.array(StepResult).optional().describe("Per-step results (get_run only)"),
    artifacts: z.array(z.string()).optional().describe("Artifact names (get_run only)"),
    waiting_for: z
      .string()
      .nullable()
      .optional()
      .describe(
        "get_run only: on a queued run that nothing connected can take, what it waits for (a runner with its environment's labels, one with Chromium, or any runner when the server executes no runs itself); else null",
      ),
  })
  .meta({ id: "Run" });

/** How many automations of a project are in each health state (AutomationHealth.state), disabled ones left out. */
const HealthCounts = {
  automations: z.number().int().describe("Its automations that are not disabled"),
  passing: z.number().int().describe("Passing by their latest run, steadily"),
  flaky: z.number().int().describe("Passed only after a retry lately, or flipping between passing and not"),
  failing: z.number().int().describe("Not passing by their latest run (failed, error or timed_out)"),
  without_verdict: z.number().int().describe("No finished run that gives a verdict yet"),
};

export const Dashboard = z
  .object({
    projects: z
      .array(
        z.object({
          id: z.string(),
          slug: z.string(),
          name: z.string(),
          ...HealthCounts,
          queued: z.number().int().describe("Its runs waiting to start"),
          running: z.number().int().describe("Its runs executing now"),
        }),
      )
      .describe(`The workspace's first ${DASHBOARD_PROJECTS} projects, in list_projects' order`),
    more_projects: z.boolean().describe(`The workspace has more than ${DASHBOARD_PROJECTS} projects (list_projects lists them all)`),
    recent_runs: z.array(Run).describe(`The ${DASHBOARD_RECENT_RUNS} latest runs of those projects, newest first`),
  })
  .meta({ id: "Dashboard" });

export const GroupRun = z
  .object({
    ...stamped,
    project_id: z.string(),
    group_id: z.string().nullable(),
    group_name: z.string(),
    trigger: RunTrigger,
    schedule_id: z.string().nullable().describe("The schedule that started the group run (trigger schedule), else null"),
    started_by: StartedBy,
    environment_id: z.string().nullable().describe("The environment asked for; null: each automation's default"),
    variables: StringRecord,
    metadata: StringRecord,
    mode: GroupMode,
    stop_on_failure: z.boolean(),
    status: RunStatus.describe("Derived from its runs (failures of quarantined automations do not count), stored when its last run ends"),
    started_at: NullableTimestamp,
    finished_at: NullableTimestamp,
    duration_ms: z.number().nullable(),
    summary: z.object({
      total: z.number().int(),
      queued: z.number().int().describe("Includes the runs a sequential group run has yet to queue"),
      running: z.number().int(),
      passed: z.number().int(),
      flaky: z.number().int().describe("Of the passed runs, those that passed only after a failed attempt"),
      failed: z.number().int(),
      error: z.number().int(),
      timed_out: z.number().int(),
      cancelled: z.number().int(),
      quarantined: z
        .number()
        .int()
        .describe("Runs of quarantined automations that did not pass (also counted under their status): reported apart, they do not fail the group run"),
    }),
    runs: z.array(Run).optional(),
    waiting_for: z
      .string()
      .nullable()
      .optional()
      .describe("get_group_run only: how many of its queued runs nothing connected can take, and what they wait for; else null"),
  })
  .meta({ id: "GroupRun" });

export const ApiKey = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().describe("svc_ + the first 8 characters"),
    created_at: Timestamp,
    updated_at: Timestamp.describe("When the key last changed (revoked); its ETag follows it"),
    last_used_at: NullableTimestamp,
    expires_at: NullableTimestamp,
    revoked_at: NullableTimestamp,
  })
  .meta({ id: "ApiKey" });

export const Runner = z
  .object({
    id: z.string(),
    name: z.string(),
    labels: z.array(z.string()).describe("The labels it was given and those it advertised when it last said hello"),
    scope: z
      .enum(["workspace", "server"])
      .describe("workspace: it only ever runs this workspace's runs; server: made by the server's operator, runs any workspace's"),
    prefix: z.string().describe("svcr_ + the first 8 characters of its token"),
    version: z.string().nullable().describe("The svc version it last said hello with; null before its first hello"),
    browser: z.boolean().nullable().describe("Whether it can run browser automations (null before its first hello)"),
    running: z.number().int().describe("This workspace's runs it holds now"),
    connected: z.boolean().describe("Heard from within a lease (runner.lease_ms; it heart-beats every third of one), and not revoked: it can take runs now"),
    last_seen_at: NullableTimestamp,
    created_at: Timestamp,
    revoked_at: NullableTimestamp,
  })
  .meta({ id: "Runner" });

export const Member = z
  .object({
    user_id: z.string(),
    email: z.string(),
    name: z.string(),
    role: Role,
    created_at: Timestamp,
    updated_at: Timestamp.describe("When the membership last changed (its role); its ETag follows it"),
  })
  .meta({ id: "Member" });

const WorkspaceRef = z.object({ id: z.string(), name: z.string(), slug: z.string() });

export const Invitation = z
  .object({
    id: z.string(),
    workspace: WorkspaceRef,
    role: Role,
    invited_by: z.object({ name: z.string(), email: z.string() }).nullable().describe("Null when the inviting person's account is gone"),
    created_at: Timestamp,
  })
  .meta({ id: "Invitation" });

export const WorkspaceInvitation = z
  .object({
    id: z.string(),
    email: z.string().describe("The invited address"),
    name: z.string().describe("The name as given when inviting"),
    role: Role.describe("The role the person gets on accepting"),
    invited_by: z.object({ name: z.string(), email: z.string() }).nullable().describe("Null when the inviting person's account is gone"),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "WorkspaceInvitation" });

export const WorkspaceRole = z.object({ workspace: WorkspaceRef, role: Role }).meta({ id: "WorkspaceMembership" });

export const Me = z
  .object({
    user: z.object({ id: z.string(), email: z.string(), name: z.string() }),
    workspace: z.object({ id: z.string(), name: z.string(), slug: z.string() }),
    role: Role,
    key: z.object({ id: z.string(), name: z.string(), prefix: z.string() }).nullable().describe("Null for a web session"),
    assistant: z
      .object({
        available: z.boolean().describe("True when the server has a model for the assistant (send_assistant_message can answer)"),
        problem: z.string().nullable().describe("When not available: why, and what the server's operator sets"),
      })
      .describe("The in-app assistant on this server"),
  })
  .meta({ id: "Me" });
