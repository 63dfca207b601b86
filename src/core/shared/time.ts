// Timestamps are ISO-8601 UTC strings everywhere.
export const nowIso = (): string => new Date().toISOString();
