// The records the pages show, typed from the manifest's schemas (types only: no schema code is bundled).
import type { z } from "zod";
import type * as R from "../manifest/records";
import type { Step as StepSchema } from "../manifest/automation-format";

export type Project = z.output<typeof R.Project>;
export type Environment = z.output<typeof R.Environment>;
export type Feature = z.output<typeof R.Feature>;
export type Generation = z.output<typeof R.Generation>;
export type Automation = z.output<typeof R.Automation>;
export type Group = z.output<typeof R.Group>;
export type Run = z.output<typeof R.Run>;
export type StepResult = z.output<typeof R.StepResult>;
export type GroupRun = z.output<typeof R.GroupRun>;
export type ApiKey = z.output<typeof R.ApiKey>;
export type Member = z.output<typeof R.Member>;
export type Runner = z.output<typeof R.Runner>;
export type Invitation = z.output<typeof R.Invitation>;
export type WorkspaceInvitation = z.output<typeof R.WorkspaceInvitation>;
export type Role = z.output<typeof R.Role>;
export type Step = z.output<typeof StepSchema>;

export interface SessionState {
  setup_required: boolean;
  /** False when first-run setup is not offered at this address (not loopback, not base_url). */
  setup_allowed?: boolean;
  /** How to proceed when setup is not offered here. */
  setup_hint?: string;
  signed_in: boolean;
  base_url: string;
  user?: { id: string; email: string; name: string };
  workspace?: { id: string; name: string; slug: string };
  role?: Role;
  /** Every workspace the person belongs to, with their role there. */
  workspaces?: { id: string; name: string; slug: string; role: Role }[];
  csrf_token?: string;
}

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  name: string;
  created_at: string;
  expires_at: string | null;
}
