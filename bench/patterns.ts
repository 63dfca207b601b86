// Member-written patterns side by side: JavaScriptCore's backtracking RegExp against svc's linear-time engine
// (re2js), on the hostile pattern of the trust review and on an everyday one. Prints milliseconds per match.
// `--smoke` uses a short subject so the run takes a moment.
import { linearPattern } from "../src/manifest/patterns";

const smoke = process.argv.includes("--smoke");
// ^(a?){n}a{n}$ against n+ "a"s and a "!" backtracks 2^n ways in a backtracking engine.
const n = smoke ? 18 : 24;
const hostile = { source: `^(a?){${n}}a{${n}}$`, subject: `${"a".repeat(smoke ? 200 : 1000)}!` };
const everyday = { source: '"id":\\s*\\d+', subject: `${JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}` })) })}` };

function time(fn: () => boolean, rounds: number): number {
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) fn();
  return (performance.now() - t0) / rounds;
}

for (const [label, c, rounds] of [
  ["hostile", hostile, 1],
  ["everyday", everyday, smoke ? 50 : 500],
] as const) {
  const js = new RegExp(c.source);
  const linear = linearPattern(c.source);
  const native = time(() => js.test(c.subject), rounds);
  const re2 = time(() => linear.test(c.subject), rounds);
  console.log(
    `${label.padEnd(9)} ${c.source.slice(0, 28).padEnd(28)}  RegExp ${native.toFixed(3).padStart(10)} ms  re2js ${re2.toFixed(3).padStart(8)} ms  RegExp/re2js ${(native / re2).toFixed(2)}`,
  );
}
