// TextMemo: one derivation per text, nothing kept from a derivation that throws, and a bound it never passes.
import { expect, test } from "bun:test";
import { TextMemo } from "./memo";

test("derives once per text and gives the same value again", () => {
  const memo = new TextMemo<{ n: number }>(10);
  let calls = 0;
  const a = memo.get("a", () => ({ n: ++calls }));
  expect(memo.get("a", () => ({ n: ++calls }))).toBe(a);
  expect(memo.get("b", () => ({ n: ++calls })).n).toBe(2);
  expect(calls).toBe(2);
});

test("a derivation that throws keeps nothing: the next call derives again", () => {
  const memo = new TextMemo<string>(10);
  expect(() =>
    memo.get("bad", () => {
      throw new Error("damaged");
    }),
  ).toThrow("damaged");
  expect(memo.size).toBe(0);
  expect(memo.get("bad", () => "fixed")).toBe("fixed");
});

test("never holds more than its bound: when full it starts again with the text in use", () => {
  const memo = new TextMemo<number>(3);
  for (let i = 0; i < 3; i++) memo.get(`t${i}`, () => i);
  expect(memo.size).toBe(3);
  memo.get("t3", () => 3);
  expect(memo.size).toBe(1);
  let derived = false;
  memo.get("t0", () => {
    derived = true;
    return 0;
  });
  expect(derived).toBe(true);
});
