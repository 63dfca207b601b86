// Toolsets: which tools a connection offers. Every tool belongs to one toolset, named after the resources it
// works on; member and key administration ("admin") is offered only when named. Read-only keeps the tools
// whose operation the manifest marks read-only.
import type { Operation } from "../src/manifest/define";

export const TOOLSETS = {
  projects: "Projects, the workspace's dashboard (and who am I)",
  environments: "Environments: variables, secrets, protection",
  features: "Features and their acceptance criteria",
  generation: "Generating draft automations from a feature",
  automations: "Automations: create, change, run",
  groups: "Groups of automations",
  runs: "Runs and group runs: results, waiting, JUnit, artifacts",
  schedules: "Schedules that start runs on their own, and alert channels that hear about failures",
  invitations: "The caller's own invitations to workspaces",
  assistant: "The in-app assistant: your conversations, and confirming the actions it held",
  admin: "Members, invitations to the workspace, API keys and runners (off unless named)",
} as const;

export type Toolset = keyof typeof TOOLSETS;
export const ALL_TOOLSETS = Object.keys(TOOLSETS) as Toolset[];
export const DEFAULT_TOOLSETS = ALL_TOOLSETS.filter((t) => t !== "admin");

export function toolsetOf(op: Operation): Toolset {
  if (op.path.includes("/generation")) return "generation";
  const seg = op.path.replace(/^\/projects\/\{project\}/, "").split("/")[1] ?? "";
  if (op.path === "/projects" || op.path === "/projects/{project}" || op.path === "/dashboard" || seg === "me" || op.path === "/me") return "projects";
  if (seg === "keys" || seg === "members" || seg === "runners") return "admin";
  if (seg === "group-runs" || seg === "runs" || seg === "test-runs" || seg === "history") return "runs";
  if (seg === "apply" || seg === "imports") return "automations";
  if (seg === "schedules" || seg === "alert-channels") return "schedules";
  if (op.path.startsWith("/assistant/")) return "assistant";
  if (seg in TOOLSETS) return seg as Toolset;
  throw new Error(`${op.name}: no toolset for path ${op.path}`);
}

export interface ToolSelection {
  readOnly: boolean;
  toolsets: ReadonlySet<Toolset>;
}

/** Parses `--toolsets a,b` / `?toolsets=a,b` ("all" for every one; absent: every one but admin). Throws with a message naming what is wrong. */
export function parseSelection(toolsets: string | undefined | null, readOnly: string | boolean | undefined | null): ToolSelection {
  let ro = false;
  if (typeof readOnly === "boolean") ro = readOnly;
  else if (readOnly !== undefined && readOnly !== null) {
    if (!["true", "false", "1", "0", ""].includes(readOnly)) throw new SelectionError("read_only", `read_only must be true or false, not "${readOnly}"`);
    ro = readOnly === "true" || readOnly === "1" || readOnly === "";
  }
  if (toolsets === undefined || toolsets === null) return { readOnly: ro, toolsets: new Set(DEFAULT_TOOLSETS) };
  const names = toolsets
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const unknown = names.filter((n) => n !== "all" && n !== "default" && !(n in TOOLSETS));
  if (unknown.length > 0 || names.length === 0) {
    throw new SelectionError(
      "toolsets",
      `${unknown.length > 0 ? `unknown toolset ${unknown.map((u) => `"${u}"`).join(", ")}` : "no toolset named"}; choose from ${ALL_TOOLSETS.join(", ")}, default or all`,
    );
  }
  const set = new Set<Toolset>();
  for (const n of names) {
    if (n === "all") for (const t of ALL_TOOLSETS) set.add(t);
    else if (n === "default") for (const t of DEFAULT_TOOLSETS) set.add(t);
    else set.add(n as Toolset);
  }
  return { readOnly: ro, toolsets: set };
}

export class SelectionError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}
