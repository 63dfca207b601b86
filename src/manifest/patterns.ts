// Member-written regular expressions (assertions' `matches`, JSON Schema `pattern`, expected browser URLs) run
// on the server that serves everyone: they are compiled by a linear-time engine with RE2 semantics (re2js), so
// no pattern can stall the process. What RE2 cannot compile (backreferences, lookaround) is refused when saved.
import { RE2JS } from "re2js";
import { TextMemo } from "../memo";

export interface LinearPattern {
  test(subject: string): boolean;
}

/** ECMAScript's `\uXXXX` (common in JSON Schema patterns) is RE2's `\x{XXXX}`; everything else is RE2 syntax. */
function toRe2Syntax(source: string): string {
  return source.replace(/(\\*)\\u([0-9A-Fa-f]{4})/g, (whole, slashes: string, hex: string) => (slashes.length % 2 === 1 ? whole : `${slashes}\\x{${hex}}`));
}

const compiledPatterns = new TextMemo<RE2JS | string>(2000);

function compiled(source: string): RE2JS | string {
  return compiledPatterns.get(source, () => {
    try {
      return RE2JS.compile(toRe2Syntax(source));
    } catch (e) {
      const reason = (e as Error).message.replace(/^error parsing regexp: /, "");
      return `/${source}/ is not a pattern svc can run (RE2 syntax; no backreferences or lookaround): ${reason}`;
    }
  });
}

/** Why a pattern cannot be used, or null when it compiles. */
export function patternProblem(source: string): string | null {
  const c = compiled(source);
  return typeof c === "string" ? c : null;
}

/** A compiled pattern; throws with `patternProblem`'s message when it does not compile. */
export function linearPattern(source: string): LinearPattern {
  const c = compiled(source);
  if (typeof c === "string") throw new Error(c);
  return { test: (subject) => c.matcher(subject).find() };
}

/**
 * ajv's `code.regExp`: JSON Schema `pattern` and `patternProperties` through the same engine. ajv keys the
 * compiled patterns of a schema by `toString()`, so each must name its own source (or all would share one).
 */
export const ajvLinearRegExp = Object.assign(
  (source: string, _flags?: string): LinearPattern & { toString(): string } => {
    const pattern = linearPattern(source);
    return { test: (subject) => pattern.test(subject), toString: () => `/${source}/` };
  },
  { code: "linearPattern" },
);
