// Values synthesized from OpenAPI schemas, and response schemas turned into plain JSON Schema.
import { describe, expect, test } from "bun:test";
import { requiredProperties, sampleOf, toJsonSchema } from "./samples";

describe("sampleOf", () => {
  test.each([
    ["an example wins", { type: "integer", example: 7 }, 7],
    ["then a default", { type: "string", default: "d" }, "d"],
    ["then the first enum value", { type: "string", enum: ["b", "a"] }, "b"],
    ["an email format", { type: "string", format: "email" }, "user@example.com"],
    ["a minimum length is honoured", { type: "string", minLength: 10 }, "examplexxx"],
    ["a maximum length is honoured", { type: "string", maxLength: 3 }, "exa"],
    ["an integer from its minimum", { type: "integer", minimum: 5 }, 5],
    ["above an OpenAPI 3.0 exclusive minimum", { type: "integer", minimum: 0, exclusiveMinimum: true }, 1],
    ["a 3.1 type list skips null", { type: ["null", "boolean"] }, true],
    [
      "required and exemplified properties, never read-only ones",
      {
        type: "object",
        required: ["name", "id"],
        properties: { id: { type: "integer", readOnly: true }, name: { type: "string" }, note: { type: "string" }, tag: { type: "string", example: "x" } },
      },
      { name: "example", tag: "x" },
    ],
    [
      "allOf merges its parts",
      {
        allOf: [
          { type: "object", required: ["a"], properties: { a: { type: "number" } } },
          { type: "object", required: ["b"], properties: { b: { type: "boolean" } } },
        ],
      },
      { a: 1, b: true },
    ],
    ["an array holds one sample", { type: "array", items: { type: "string", enum: ["z"] } }, ["z"]],
  ])("%s", (_name, schema, expected) => {
    expect(sampleOf(schema)).toEqual(expected);
  });

  test("required properties leave out read-only ones", () => {
    expect(requiredProperties({ required: ["id", "name"], properties: { id: { readOnly: true }, name: {} } })).toEqual(["name"]);
  });
});

describe("toJsonSchema", () => {
  test("nullable becomes a null type and OpenAPI-only keywords go", () => {
    expect(toJsonSchema({ type: "object", properties: { a: { type: "string", nullable: true, example: "x" } }, xml: { name: "a" } })).toEqual({
      type: "object",
      properties: { a: { type: ["string", "null"] } },
    });
  });
  test("OpenAPI 3.0's boolean exclusive bounds become JSON Schema's number bounds", () => {
    expect(toJsonSchema({ type: "number", minimum: 0, exclusiveMinimum: true, maximum: 5, exclusiveMaximum: false })).toEqual({
      type: "number",
      exclusiveMinimum: 0,
      maximum: 5,
    });
  });
  test("a write-only property is never required of a response", () => {
    expect(
      toJsonSchema({ type: "object", required: ["name", "password"], properties: { name: { type: "string" }, password: { type: "string", writeOnly: true } } }),
    ).toEqual({ type: "object", required: ["name"], properties: { name: { type: "string" }, password: { type: "string", writeOnly: true } } });
    expect(toJsonSchema({ type: "object", required: ["password"], properties: { password: { writeOnly: true } } })).toEqual({
      type: "object",
      properties: { password: { writeOnly: true } },
    });
  });
  test("a schema with a $ref left in it (circular or external) cannot be checked offline", () => {
    expect(toJsonSchema({ type: "object", properties: { next: { $ref: "#/components/schemas/Node" } } })).toBeNull();
    const loop: Record<string, unknown> = { type: "object", properties: {} };
    (loop.properties as Record<string, unknown>).self = loop;
    expect(toJsonSchema(loop)).toBeNull();
  });
});
