// {{NAME}} interpolation and secret masking, the two string rewrites every run applies.
import { describe, expect, test } from "bun:test";
import { interpolateJson, interpolateText, MissingVariableError } from "./interpolation";
import { maskDeep, secretMasker } from "./secret-masking";

const vars = new Map<string, unknown>([
  ["NAME", "ada"],
  ["ID", 42],
  ["OBJ", { a: 1 }],
]);

describe("interpolation", () => {
  test("replaces placeholders, with or without spaces, and leaves other braces alone", () => {
    expect(interpolateText("/u/{{NAME}}/{{ ID }}?x={a}", vars)).toBe("/u/ada/42?x={a}");
  });
  test("a whole-string placeholder in JSON keeps the value's type; a partial one becomes text", () => {
    expect(interpolateJson({ id: "{{ID}}", o: "{{OBJ}}", label: "id {{ID}}", list: ["{{NAME}}", 1] }, vars)).toEqual({
      id: 42,
      o: { a: 1 },
      label: "id 42",
      list: ["ada", 1],
    });
  });
  test("an undefined name is an error that names it and says where to define it", () => {
    expect(() => interpolateText("{{MISSING}}", vars)).toThrow(MissingVariableError);
    expect(() => interpolateText("{{MISSING}}", vars)).toThrow("{{MISSING}} is not defined: add it to the run's environment");
  });
});

describe("secret masking", () => {
  test("nothing to mask costs nothing", () => expect(secretMasker({ EMPTY: "" })).toBeNull());
  test("masks the value, its URL-encoded and JSON-escaped forms, in values but not keys", () => {
    const mask = secretMasker({ T: 'p@ss "word"' });
    if (!mask) throw new Error("expected a masker");
    const masked = maskDeep(
      { url: `/x?t=${encodeURIComponent('p@ss "word"')}`, body: JSON.stringify({ t: 'p@ss "word"' }), 'p@ss "word"': 'p@ss "word"', n: 1 },
      mask,
    );
    expect(masked).toEqual({ url: "/x?t=***", body: '{"t":"***"}', 'p@ss "word"': "***", n: 1 });
  });
  test("a step's and an attempt's status are svc's own words: a secret they contain leaves them whole", () => {
    const mask = secretMasker({ WORD: "cancelled" });
    if (!mask) throw new Error("expected a masker");
    const masked = maskDeep(
      { steps: [{ status: "cancelled", message: "cancelled by cancelled" }], attempts: [{ status: "cancelled", error: "cancelled" }] },
      mask,
    );
    expect(masked).toEqual({ steps: [{ status: "cancelled", message: "*** by ***" }], attempts: [{ status: "cancelled", error: "***" }] });
  });
  test("a secret used as a host name is masked in the lowercased form the URL parser gives it", () => {
    const mask = secretMasker({ TENANT: "AcmeProd7" });
    if (!mask) throw new Error("expected a masker");
    const url = new URL("https://{{TENANT}}.example.test/x".replace("{{TENANT}}", "AcmeProd7")).toString();
    expect(url).toBe("https://acmeprod7.example.test/x");
    expect(mask(`GET ${url}`)).toBe("GET https://***.example.test/x");
    expect(mask("AcmeProd7 and acmeprod7")).toBe("*** and ***");
  });
});
