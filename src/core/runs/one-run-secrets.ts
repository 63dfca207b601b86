// One-run secrets (`--secret K=V`): handed to the run engine from memory, never written to the database. They are
// kept by run id (and by group run id while a sequential group run has runs yet to queue) from the moment the run
// is queued until it is claimed, cancelled or its group run ends, in the memory of the running core: a restart
// loses them. The run records only their names, so a run whose secrets did not survive a restart of the server is
// ended as error instead of running without them.
import type { Core } from "../context";

type Kept = Map<string, Record<string, string>>;

/** Per running core (its event channel is its own), so a core opened again starts with none. */
const byCore = new WeakMap<object, Kept>();

function keptBy(core: Core): Kept {
  let kept = byCore.get(core.events);
  if (!kept) {
    kept = new Map();
    byCore.set(core.events, kept);
  }
  return kept;
}

export function keepOneRunSecrets(core: Core, id: string, secrets: Record<string, string>): void {
  if (Object.keys(secrets).length > 0) keptBy(core).set(id, { ...secrets });
}

/** The secrets kept for `id`, without forgetting them. */
export function peekOneRunSecrets(core: Core, id: string): Record<string, string> | undefined {
  return keptBy(core).get(id);
}

/** The secrets kept for `id`, forgotten at once: only one claim of a run gets them. */
export function takeOneRunSecrets(core: Core, id: string): Record<string, string> | undefined {
  const kept = keptBy(core);
  const s = kept.get(id);
  kept.delete(id);
  return s;
}

export function forgetOneRunSecrets(core: Core, id: string): void {
  keptBy(core).delete(id);
}
