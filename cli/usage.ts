// A mistake in how a command was called: printed as one line, exit code 2.
export class UsageError extends Error {}

/**
 * A switch given a value (`--quarantined false`) leaves the value over as an argument, and commander then speaks
 * of too many arguments: say what was meant instead. Else `text` as it is.
 */
export function switchValueHint(text: string, argv: string[], negatable: (flag: string) => boolean): string {
  if (!/too many arguments/.test(text)) return text;
  for (let i = 0; i + 1 < argv.length; i++) {
    const flag = /^--(?!no-)([a-z][a-z0-9-]*)$/.exec(argv[i] ?? "")?.[1];
    const value = argv[i + 1]?.toLowerCase();
    if (!flag || !value || !["true", "false", "yes", "no", "on", "off"].includes(value)) continue;
    const on = ["true", "yes", "on"].includes(value);
    const meant = on ? `--${flag}` : negatable(flag) ? `--no-${flag}` : `nothing (leave --${flag} out)`;
    return `--${flag} takes no value: write ${meant}, not "--${flag} ${argv[i + 1]}"`;
  }
  return text;
}
