// Request parameters serialized as the document says, and the unknown id an unknown-id test asks for.
import { describe, expect, test } from "bun:test";
import type { ApiOperation, ApiParameter } from "./operations";
import { requestParameters, testsForOperation, unknownValue } from "./tests";

const param = (p: Partial<ApiParameter>): ApiParameter => ({ name: "p", in: "query", required: true, schema: {}, example: undefined, ...p });
const op = (parameters: ApiParameter[]): ApiOperation => ({
  method: "GET",
  path: "/x",
  id: "x",
  tags: [],
  parameters,
  body: null,
  otherBody: null,
  statuses: ["200"],
  responseSchemas: new Map(),
  responseTypes: new Map(),
  security: [],
  cut: [],
});

describe("requestParameters", () => {
  test("a required array is sent: one item as a plain value, several repeated (explode) or joined (style)", () => {
    const r = requestParameters(
      op([
        param({ name: "status", schema: { type: "array", items: { type: "string", enum: ["available", "sold"] } } }),
        param({ name: "tags", example: ["a", "b"] }),
        param({ name: "ids", explode: false, example: [1, 2] }),
        param({ name: "ps", style: "pipeDelimited", example: ["a", "b"] }),
        param({ name: "filter", style: "deepObject", explode: true, example: { color: "red" } }),
      ]),
    );
    expect(r).toEqual({
      query: { status: "available", ids: "1,2", ps: "a|b", "filter[color]": "red" },
      inUrl: ["tags=a", "tags=b"],
      headers: {},
      problems: [],
    });
  });

  test("cookies and headers are sent; a value that cannot be sent is named, never dropped silently", () => {
    const r = requestParameters(
      op([
        param({ name: "session", in: "cookie", example: "abc" }),
        param({ name: "X-Ids", in: "header", example: [1, 2] }),
        param({ name: "nested", example: [{ a: 1 }] }),
        param({ name: "none", schema: undefined }),
      ]),
    );
    expect(r.headers).toEqual({ cookie: "session=abc", "x-ids": "1,2" });
    expect(r.problems).toEqual([
      'the required query parameter "nested" is an array of nested values, which a query string cannot carry, so the request leaves it out',
      'the required query parameter "none" has no example and no schema to build a value from, so the request leaves it out',
    ]);
  });
});

describe("unknownValue", () => {
  const path = (schema: unknown, example?: unknown) => param({ in: "path", name: "id", schema, example });
  test.each([
    ["an unbounded integer", path({ type: "integer" }), { value: 987654321 }],
    ["an integer of 1 to 10: the largest", path({ type: "integer", minimum: 1, maximum: 10 }), { value: 10 }],
    ["the largest is the sample's: the next one", path({ type: "integer", minimum: 1, maximum: 10 }, 10), { value: 9 }],
    ["a uuid", path({ type: "string", format: "uuid" }), { value: "ffffffff-ffff-4fff-bfff-ffffffffffff" }],
    ["a string of at most 5 characters", path({ type: "string", maxLength: 5 }), { value: "does-" }],
    ["a pattern of digits", path({ type: "string", pattern: "^[0-9]+$" }), { value: "987654321" }],
    ["a pattern with a prefix: the sample's digits moved", path({ type: "string", pattern: "^ord_[0-9]{6}$" }, "ord_000123"), { value: "ord_999999" }],
    ["a pattern of a letter range: as far as it allows", path({ type: "string", pattern: "^[A-F]{4}-[0-9]{2}$" }, "ABCD-12"), { value: "FFFF-99" }],
  ])("%s", (_name, p, expected) => {
    expect(unknownValue(p)).toEqual(expected);
  });

  test.each([
    ["an enum", path({ type: "string", enum: ["a", "b"] }), "its schema lists every value it allows"],
    ["a range of one value", path({ type: "integer", minimum: 3, maximum: 3 }), "its schema allows only 3"],
    ["a pattern no candidate matches", path({ type: "string", pattern: "^[A-F]{4}-[0-9]{2}$" }), "no value the generator makes matches"],
    ["a pattern whose sample cannot move", path({ type: "string", pattern: "^(ZZ|Z9)$" }, "ZZ"), "no value the generator makes matches"],
  ])("none exists for %s, and the reason says why", (_name, p, reason) => {
    const r = unknownValue(p);
    expect("none" in r && r.none).toContain(reason);
  });
});

describe("the accept header", () => {
  const accept = (types: string[]) => {
    const o = { ...op([]), responseTypes: new Map([["200", types]]) };
    const made = testsForOperation(o, {}, "");
    return (made.automations[0]?.steps[0] as { request: { headers: Record<string, string> } }).request.headers.accept;
  };
  test("JSON when the success is documented in JSON (or in no media type), else the type it is documented in", () => {
    expect(accept(["application/xml", "application/json"])).toBe("application/json");
    expect(accept([])).toBe("application/json");
    expect(accept(["text/plain"])).toBe("text/plain");
  });
});
