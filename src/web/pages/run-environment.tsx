// The environment a run action starts its runs in, chosen beside every run button. Its default: each automation's
// own when every selected automation has one (or, re-running, the earlier group run's); else the project's only
// environment; else the one this person last ran in here (kept in this browser). "None" is offered only when every
// selected automation has a default to fall back on, or the project has no environment at all: otherwise the person
// picks one before running.
import { useState } from "preact/hooks";
import { allPages, call } from "../api";
import { useLoad } from "../hooks";
import type { Environment, Run } from "../types";
import { Field, inputValue } from "../ui";

const lastKey = (project: string) => `svc.run-environment.${project}`;

function lastUsed(project: string): string | null {
  try {
    return localStorage.getItem(lastKey(project));
  } catch {
    return null;
  }
}

/** A protected environment says so where it is chosen: only owners and admins may start runs in it. */
export const environmentLabel = (e: Environment) => (e.protected ? `${e.name} (protected)` : e.name);

export interface RunEnvironment {
  /** The environment id to send, or undefined for each automation's default (or the earlier group run's). */
  environment: string | undefined;
  /** False while no environment is chosen and some automation has no default: the run button waits. */
  ready: boolean;
  /** Remembers the choice as this person's last one in the project (call when a run starts). */
  remember: () => void;
  picker: preact.JSX.Element;
  /** The environment's name by id, for showing runs. */
  nameOf: (id: string | null) => string | null;
}

/**
 * `automations`: what the action runs (their default environments); `fallback`: what "" means when it is not each
 * automation's default (re-running a group run: "its environment").
 */
export function useRunEnvironment(
  project: string,
  automations: { environment_id: string | null }[],
  fallback?: { label: string; id: string | null },
): RunEnvironment {
  const envs = useLoad(() => allPages((cursor) => call("listEnvironments", { project, limit: 200, cursor })), `envs:${project}`);
  const [picked, setPicked] = useState<string | null>(null);
  const list = envs.data?.data ?? [];
  const everyHasDefault = automations.length > 0 && automations.every((a) => a.environment_id !== null);
  // A project without environments runs with none (its automations use absolute URLs).
  const noneAllowed = everyHasDefault || fallback !== undefined || (envs.data !== null && list.length === 0);
  const remembered = lastUsed(project);
  const initial = noneAllowed ? "" : list.length === 1 ? (list[0]?.id ?? "") : remembered && list.some((e) => e.id === remembered) ? remembered : "";
  const value = picked ?? initial;
  // Re-running: "as this run (staging)", so the default says which environment it is.
  const fallbackName = fallback?.id ? list.find((e) => e.id === fallback.id)?.name : undefined;
  const noneLabel = fallback
    ? fallbackName
      ? `${fallback.label} (${fallbackName})`
      : fallback.label
    : everyHasDefault
      ? automations.length === 1
        ? "the automation's default"
        : "each automation's default"
      : noneAllowed
        ? "none"
        : "choose an environment…";
  const picker = (
    <Field label="Environment">
      <select value={value} onChange={(e) => setPicked(inputValue(e))} aria-invalid={!noneAllowed && value === ""}>
        <option value="" disabled={!noneAllowed}>
          {noneLabel}
        </option>
        {list.map((e) => (
          <option key={e.id} value={e.id}>
            {environmentLabel(e)}
          </option>
        ))}
      </select>
    </Field>
  );
  return {
    environment: value === "" ? undefined : value,
    ready: envs.data !== null && (noneAllowed || value !== ""),
    remember: () => {
      if (value === "") return;
      try {
        localStorage.setItem(lastKey(project), value);
      } catch {
        // A browser that keeps nothing: the next default is simply not remembered.
      }
    },
    picker,
    // While the environments load, "…" rather than an id that turns into a name a moment later; an environment
    // deleted since shows as its id.
    nameOf: (id) => (id === null ? null : (list.find((e) => e.id === id)?.name ?? (envs.data === null && envs.error === null ? "…" : id))),
  };
}

/** Who or what started a run or group run, in words. */
export function startedByText(by: Run["started_by"]): string {
  if (!by) return "—";
  const kinds = { user: "", key: "key ", schedule: "schedule ", assistant: "assistant for ", operator: "operator " } as const;
  return `${kinds[by.kind]}${by.name}`;
}

/** The CI metadata of a run or group run: build_url as a link, the others as text. */
export function MetadataFacts({ metadata }: { metadata: Record<string, string> }) {
  const entries = Object.entries(metadata);
  if (entries.length === 0) return <span class="muted">none</span>;
  return (
    <span data-testid="run-metadata">
      {entries.map(([k, v], i) => (
        <span key={k}>
          {i > 0 ? " · " : ""}
          {k}:{" "}
          {k === "build_url" && /^https?:\/\//.test(v) ? (
            <a href={v} target="_blank" rel="noopener noreferrer">
              {v}
            </a>
          ) : (
            <code>{v}</code>
          )}
        </span>
      ))}
    </span>
  );
}

/** The project's environments' names by id (one list read per table or page). */
export function useEnvironmentNames(project: string): (id: string | null) => string | null {
  const envs = useLoad(() => allPages((cursor) => call("listEnvironments", { project, limit: 200, cursor })), `env-names:${project}`);
  const list = envs.data?.data ?? [];
  return (id) => (id === null ? null : (list.find((e) => e.id === id)?.name ?? id));
}

/** A run's trigger and starter in one line, with its branch and commit when CI gave them. */
export function StartedBy({ trigger, by, metadata }: { trigger: Run["trigger"]; by: Run["started_by"]; metadata: Record<string, string> }) {
  const ci = [metadata.branch, metadata.commit?.slice(0, 12)].filter(Boolean).join(" @ ");
  return (
    <>
      {trigger}
      {by ? ` · ${startedByText(by)}` : ""}
      {ci ? <span class="mono"> · {ci}</span> : ""}
    </>
  );
}

/** Where a run or group run came from, as facts of its page: environment, who or what started it, CI metadata. */
export function OriginFacts({
  project,
  record,
}: {
  project: string;
  record: Pick<Run, "environment_id" | "trigger" | "started_by" | "metadata"> & { runs?: { environment_id: string | null }[] };
}) {
  const names = useEnvironmentNames(project);
  // A group run asked for no environment: its runs used their automations' own.
  const envs = record.environment_id === null && record.runs ? [...new Set(record.runs.map((r) => r.environment_id))] : [record.environment_id];
  const envText = envs.map((id) => names(id) ?? "none").join(", ") || "none";
  return (
    <>
      <div>
        <dt>Environment</dt>
        <dd data-testid="run-environment">{envText}</dd>
      </div>
      <div>
        <dt>Trigger</dt>
        <dd>{record.trigger}</dd>
      </div>
      <div>
        <dt>Started by</dt>
        <dd data-testid="run-started-by">{startedByText(record.started_by)}</dd>
      </div>
      <div>
        <dt>CI metadata</dt>
        <dd>
          <MetadataFacts metadata={record.metadata} />
        </dd>
      </div>
    </>
  );
}
