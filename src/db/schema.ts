// Table types for Kysely. Enum columns carry the manifest's enum types; JSON columns are stored as TEXT and read
// in the core through the schema of what they hold (src/core/shared/json.ts).
import type { ColumnType, Generated } from "kysely";
import type { z } from "zod";
import type { AutomationKind } from "../manifest/automation-format";
import type { AutomationSource, AutomationStatus, GenerationStatus, Role, RunStatus, RunTrigger, Strategy } from "../manifest/records";

type RoleName = z.infer<typeof Role>;

interface Stamped {
  id: string;
  created_at: string;
  updated_at: string;
}

export interface WorkspaceTable extends Stamped {
  name: string;
  slug: string;
}
export interface UserTable extends Stamped {
  email: string;
  name: string;
  password_hash: string | null;
  setup_token_hash: string | null;
  setup_token_expires_at: string | null;
}
export interface MembershipTable {
  workspace_id: string;
  user_id: string;
  role: RoleName;
  created_at: string;
  updated_at: string;
}
export interface ApiKeyTable extends Stamped {
  workspace_id: string;
  user_id: string;
  name: string;
  prefix: string;
  hash: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}
/** An invitation of someone who already has an account; accepting it makes the membership. */
export interface InvitationTable extends Stamped {
  workspace_id: string;
  user_id: string;
  role: RoleName;
  /** The name the inviting admin gave, shown to that workspace instead of the account's own. */
  name: string;
  invited_by: string | null;
}
export interface SessionTable {
  id: string;
  token_hash: string;
  user_id: string;
  workspace_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
}
export interface ProjectTable extends Stamped {
  workspace_id: string;
  slug: string;
  name: string;
  description: string;
  openapi: string | null;
}
export interface EnvironmentTable extends Stamped {
  project_id: string;
  name: string;
  variables: string;
  /** JSON object of name → value; each value sealed (src/security/secret-box.ts) once `secrets_sealed` is 1. */
  secrets: string;
  /** 0 only for environments written before secrets were encrypted, until the next start seals them. */
  secrets_sealed: number;
  /** 1: only owners and admins change it or start runs in it, and its secrets go only to its allowed hosts. */
  protected: number;
  /** JSON array of host names, or null for the host of its BASE_URL. */
  allowed_hosts: string | null;
  /** JSON array of labels a runner must all have to run this environment's runs. */
  runner_labels: Generated<string>;
  /** The identity `svc apply` gave it within the project (null: not applied). */
  key: Generated<string | null>;
}
export interface FeatureTable extends Stamped {
  project_id: string;
  name: string;
  description: string;
  acceptance_criteria: string;
  target: string | null;
}
export interface GenerationTable extends Stamped {
  project_id: string;
  feature_id: string;
  status: z.infer<typeof GenerationStatus>;
  strategy: z.infer<typeof Strategy>;
  progress: string;
  warnings: string;
  automation_ids: string;
  result: string | null;
  error: string | null;
  started_at: string | null;
  finished_at: string | null;
}
export interface AutomationTable extends Stamped {
  project_id: string;
  feature_id: string | null;
  generation_id: string | null;
  name: string;
  description: string;
  kind: z.infer<typeof AutomationKind>;
  steps: string;
  environment_id: string | null;
  tags: string;
  status: z.infer<typeof AutomationStatus>;
  source: z.infer<typeof AutomationSource>;
  edited: number;
  timeout_ms: number;
  retries: number;
  last_run_id: string | null;
  last_run_status: z.infer<typeof RunStatus> | null;
  last_run_at: string | null;
  /** The identity `svc apply` gave it within the project (null: not applied). */
  key: Generated<string | null>;
  /** 1: it still runs, but its failures do not fail its group run (reported apart). */
  quarantined: Generated<number>;
}
export interface GroupTable extends Stamped {
  project_id: string;
  name: string;
  description: string;
  automation_ids: string;
  /** The identity `svc apply` gave it within the project (null: not applied). */
  key: Generated<string | null>;
  mode: Generated<"parallel" | "sequential">;
  stop_on_failure: Generated<number>;
}
export interface GroupRunTable extends Stamped {
  project_id: string;
  group_id: string | null;
  group_name: string;
  trigger: z.infer<typeof RunTrigger>;
  /** The schedule that started it, if one did. */
  schedule_id: string | null;
  /** The verdict, stored when its last run ends (null before: derived from its runs). */
  status: z.infer<typeof RunStatus> | null;
  /** JSON of the group run's summary, stored with `status`. */
  summary: string | null;
  started_at: string | null;
  finished_at: string | null;
  /** The environment asked for (null: each automation's default). */
  environment_id: Generated<string | null>;
  /** JSON object: the per-run variables it was started with. */
  variables: Generated<string>;
  /** JSON object: CI metadata (commit, branch, build_url, pr, free keys). */
  metadata: Generated<string>;
  mode: Generated<"parallel" | "sequential">;
  stop_on_failure: Generated<number>;
  /** JSON array of automation ids a sequential group run has yet to queue, in order. */
  pending: Generated<string>;
  /** JSON {kind, name}: who or what started it (null: started before this was kept). */
  started_by: Generated<string | null>;
}
/** Daily roll-up of one automation's finished runs (UTC day), kept when the runs are pruned. */
export interface RunDailyTable {
  automation_id: string;
  /** YYYY-MM-DD (UTC). */
  day: string;
  project_id: string;
  runs: number;
  passed: number;
  failed: number;
  /** Of the passed runs, those that passed only after a failed attempt. */
  flaky: number;
  /** JSON histogram of durations: log-scale bucket → count (src/core/history/durations.ts). */
  durations: string;
}
export interface RunTable extends Stamped {
  project_id: string;
  automation_id: string;
  automation_name: string;
  group_run_id: string | null;
  environment_id: string | null;
  trigger: z.infer<typeof RunTrigger>;
  status: z.infer<typeof RunStatus>;
  /** The schedule that started it, if one did. */
  schedule_id: string | null;
  /** Snapshot of the automation (kind, steps, timeout, retries) taken when the run was queued. */
  spec: string;
  attempts: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  summary: string;
  error: string | null;
  results: string;
  /** Incremented when a worker claims the run; guards against two workers finishing it. */
  claim: Generated<number>;
  /** Order within its group run. */
  position: Generated<number>;
  /** The remote runner holding the run (null: the server's own engine, or none). */
  runner_id: Generated<string | null>;
  /** When the runner's lease on the run ends unless it heart-beats. */
  lease_expires_at: Generated<string | null>;
  /** When the holding runner began executing it (null: claimed, not begun). */
  runner_started_at: Generated<string | null>;
  /** Times a runner holding it was lost mid-run (counted against the automation's retries). */
  runner_losses: Generated<number>;
  /** 1 when its automation was quarantined as the run was queued. */
  quarantined: Generated<number>;
  /** 1 once the finished run is counted in run_daily. */
  rolled_up: Generated<number>;
  /** JSON object: per-run variables overriding the environment's. */
  variables: Generated<string>;
  /** JSON object: CI metadata. */
  metadata: Generated<string>;
  /** JSON array of the names of one-run secrets it was started with (their values are never stored). */
  one_run_secrets: Generated<string>;
  /** JSON {kind, name}: who or what started it (null: started before this was kept). */
  started_by: Generated<string | null>;
}
/** A runner on another machine: only its token's hash is kept. */
export interface RunnerTable extends Stamped {
  name: string;
  /** JSON array of the labels given when its token was made. */
  labels: string;
  /** null: server-wide; else it only ever claims this workspace's runs. */
  workspace_id: string | null;
  prefix: string;
  token_hash: string;
  last_seen_at: string | null;
  version: string | null;
  /** JSON `{browser: boolean}` from its last hello. */
  capabilities: string | null;
  /** JSON array of the labels the runner added itself in its last hello. */
  advertised_labels: string;
  /** The `svc runner` process that holds the token (its X-Svc-Runner-Instance, from its last hello); null: none said. */
  instance_id: string | null;
  revoked_at: string | null;
}
/** A schedule: `target` is JSON ({automation}, {group} or {tags}, ids as resolved); cron or interval_seconds. */
export interface ScheduleTable extends Stamped {
  project_id: string;
  name: string;
  target: string;
  environment_id: string | null;
  cron: string | null;
  timezone: string | null;
  interval_seconds: number | null;
  enabled: number;
  /** When it is next due; null while disabled. */
  next_run_at: string | null;
  last_fired_at: string | null;
  last_error: string | null;
  /** The member whose role the runs it starts are checked against (protected environments). */
  created_by: string;
  /** Its identity within the project when `svc apply` made it (the document's key or path), else null. */
  key: Generated<string | null>;
}
/** One row per schedule and due time: the key that makes a tick fire once, whatever the number of nodes. */
export interface ScheduleFireTable {
  schedule_id: string;
  due_at: string;
  fired_at: string;
  run_id: string | null;
  group_run_id: string | null;
  error: string | null;
  /** Why the due time started nothing on purpose (the schedule's previous run had not ended), else null. */
  skipped: string | null;
}
export interface AlertChannelTable extends Stamped {
  project_id: string;
  name: string;
  kind: "webhook" | "slack" | "email";
  url: string | null;
  /** Sealed (src/security/secret-box.ts); never answered. */
  secret: string | null;
  email_to: string | null;
  /** JSON array of event names. */
  events: string;
  /** Seconds between reminders while failing, or null for none. */
  remind_every: number | null;
  /** Its identity within the project when `svc apply` made it (the document's key or path), else null. */
  key: Generated<string | null>;
}
/** The last known state of what alerts are about: an automation in an environment, a group, a schedule. */
export interface AlertStateTable {
  subject_key: string;
  project_id: string;
  state: "passing" | "failing" | "flaky";
  since: string;
  last_run_id: string | null;
  updated_at: string;
}
/** The outbox: one row per event and channel, written in the transaction that changed the state. */
export interface AlertDeliveryTable {
  id: string;
  channel_id: string;
  project_id: string;
  subject_key: string;
  event: string;
  /** The exact JSON body: a retry sends the same bytes. */
  body: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  status_code: number | null;
  error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
  updated_at: string;
}
export interface RunMetadataTable {
  /** A run or group run id. */
  subject_id: string;
  key: string;
  value: string;
}
export interface IdempotencyTable {
  workspace_id: string;
  operation: string;
  key: string;
  status: number;
  response: string;
  created_at: string;
}

/** A request-budget token bucket shared by every node (PostgreSQL); see src/db/postgres-buckets.ts. */
export interface RateLimitBucketTable {
  bucket: string;
  tokens: number;
  updated_ms: number;
  taken: number;
}
/** One setting of the installation, written once (the secrets key check). */
export interface InstanceSettingTable {
  name: string;
  value: string;
  created_at: string;
}

export interface AssistantConversationTable extends Stamped {
  workspace_id: string;
  user_id: string;
  title: string;
  /** JSON: the chat-completions messages exchanged so far. */
  messages: string;
}
export interface AssistantActionTable extends Stamped {
  conversation_id: string;
  tool: string;
  /** JSON object. */
  arguments: string;
  status: "done" | "needs_confirmation" | "refused" | "failed";
  /** JSON: the tool's compact result, or why it was refused. */
  result: string | null;
}

/** A run's artifact (a screenshot): its bytes, kept with the run and removed with it. */
export interface RunArtifactTable {
  run_id: string;
  name: string;
  /** Empty when the artifact is an object in the S3 bucket (`object_key`). */
  bytes: Uint8Array;
  size: number;
  created_at: string;
  /** The object's key in the `[artifacts.s3]` bucket; null: the bytes are in the row. */
  object_key: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Objects of artifact rows that are gone, to delete from the bucket (written by a trigger on run_artifacts). */
export interface ArtifactDeletionTable {
  object_key: string;
  created_at: string;
}

export interface DB {
  workspaces: WorkspaceTable;
  users: UserTable;
  memberships: MembershipTable;
  api_keys: ApiKeyTable;
  sessions: SessionTable;
  invitations: InvitationTable;
  projects: ProjectTable;
  environments: EnvironmentTable;
  features: FeatureTable;
  generations: GenerationTable;
  automations: AutomationTable;
  groups: GroupTable;
  group_runs: GroupRunTable;
  runs: RunTable;
  run_daily: RunDailyTable;
  run_metadata: RunMetadataTable;
  run_artifacts: RunArtifactTable;
  artifact_deletions: ArtifactDeletionTable;
  idempotency_keys: IdempotencyTable;
  runners: RunnerTable;
  schedules: ScheduleTable;
  schedule_fires: ScheduleFireTable;
  alert_channels: AlertChannelTable;
  alert_states: AlertStateTable;
  alert_deliveries: AlertDeliveryTable;
  assistant_conversations: AssistantConversationTable;
  assistant_actions: AssistantActionTable;
  rate_limit_buckets: RateLimitBucketTable;
  instance_settings: InstanceSettingTable;
}
