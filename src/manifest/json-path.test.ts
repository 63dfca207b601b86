// JSON paths as assertions and captures read them.
import { describe, expect, test } from "bun:test";
import { JsonPathError, readJsonPath } from "./json-path";

const doc = {
  id: 7,
  "a b": { c: [1, 2, 3] },
  items: [
    { id: 1, tags: ["x"] },
    { id: 2, tags: [] },
  ],
  nothing: null,
};

describe("readJsonPath", () => {
  const cases: [string, unknown][] = [
    ["$.id", 7],
    ["id", 7],
    ["$['a b'].c[1]", 2],
    ['$["a b"].c[-1]', 3],
    ["$.items[*].id", [1, 2]],
    ["$.items.length", 2],
    ["$.items[0].tags[0]", "x"],
    ["$.nothing", null],
    ["$", doc],
    ["$.*", Object.values(doc)],
  ];
  for (const [path, value] of cases) {
    test(`${path} finds ${JSON.stringify(value)?.slice(0, 30)}`, () => expect(readJsonPath(doc, path)).toEqual({ found: true, value }));
  }
  for (const path of ["$.missing", "$.items[5]", "$.id.x", "$.items[0].tags[3]", "$.nothing.x"]) {
    test(`${path} finds nothing`, () => expect(readJsonPath(doc, path).found).toBe(false));
  }
  for (const path of ["$.items[", "$.items[x]", "$..", "$ id"]) {
    test(`${path} is refused with a message naming it`, () => {
      expect(() => readJsonPath(doc, path)).toThrow(JsonPathError);
      expect(() => readJsonPath(doc, path)).toThrow(path);
    });
  }
});
