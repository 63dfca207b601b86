// Command-line flags shared by the benchmark scripts: `--smoke` and friends are switches, `--name N` numbers.
const argv = process.argv.slice(2);

/** True when the switch `--name` was given. */
export const has = (name: string): boolean => argv.includes(`--${name}`);

/** The number after `--name`, or `dflt` when the flag is absent. */
export function flag(name: string, dflt: number): number {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
}
