// One-run secrets (`--secret K=V`): handed to the run engine from memory, never written to the database. They are
// kept by run id (and by group run id while a sequential group run has runs yet to queue) from the moment the run
// is queued until it is claimed, cancelled or its group run ends. The run records only their names, so a run whose
// secrets did not survive a restart of the server is ended as error instead of running without them.
const kept = new Map<string, Record<string, string>>();

export function keepOneRunSecrets(id: string, secrets: Record<string, string>): void {
  if (Object.keys(secrets).length > 0) kept.set(id, { ...secrets });
}

/** The secrets kept for `id`, without forgetting them. */
export function peekOneRunSecrets(id: string): Record<string, string> | undefined {
  return kept.get(id);
}

/** The secrets kept for `id`, forgotten at once: only one claim of a run gets them. */
export function takeOneRunSecrets(id: string): Record<string, string> | undefined {
  const s = kept.get(id);
  kept.delete(id);
  return s;
}

export function forgetOneRunSecrets(id: string): void {
  kept.delete(id);
}
