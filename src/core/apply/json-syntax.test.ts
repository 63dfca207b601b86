// jsonSyntaxError: null for every JSON text, and for a text that is not JSON the character where it stops being so.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { jsonSyntaxError } from "./json-syntax";

test("JSON texts, however written, are JSON", () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2, "\t"), (v, indent) => {
      expect(jsonSyntaxError(JSON.stringify(v, null, indent))).toBeNull();
    }),
  );
  expect(jsonSyntaxError(' {"a": "\\u00e9\\n\\"", "b": [-1.5e3, true, null]} \n')).toBeNull();
});

test("a text that is not JSON is told at the character where it stops being JSON", () => {
  const cases: [string, string, string][] = [
    ['{"a": [1,]}', "]", 'expected a value, found "]" (a comma before ] is not JSON)'],
    ['{"a": 1,\n}', "}", 'expected a key in double quotes, found "}" (a comma before } is not JSON)'],
    ["name: x\n", "n", 'expected a value (an object, a list, a string in double quotes, a number, true, false or null), found "n"'],
    ["{'a': 1}", "'", 'expected a key in double quotes, found "\'"'],
    ['{"a": 1} // note', "/", 'expected the end of the file after the value, found "/"'],
    ['{"a": "x\ty"}', "\t", "a control character (a line break, a tab) inside a string: write it as \\n or \\t"],
    ['{"a": 01}', "1", 'expected "," or "}" after a value, found "1"'],
    ['{"a": "open', "", "a string is not closed"],
    ['{"a" 1}', "1", 'expected ":" after a key, found "1"'],
  ];
  for (const [text, at, message] of cases) {
    const e = jsonSyntaxError(text);
    expect(e).toEqual({ offset: at === "" ? text.length : text.indexOf(at), message });
  }
});
