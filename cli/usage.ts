// A mistake in how a command was called: printed as one line, exit code 2.
export class UsageError extends Error {}
