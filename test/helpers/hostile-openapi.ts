// Small OpenAPI documents that are costly to expand: the generation and upload bounds are proven against them.

const LETTERS = "ABCDEFGHIJ".split("");

/**
 * About 4 KB: schemas A..J, each with ten properties that all reference the next one, so following every $ref
 * makes 10^10 copies of J.
 */
export function fanOutDocument(): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  LETTERS.forEach((name, i) => {
    const next = LETTERS[i + 1];
    schemas[name] = next
      ? { type: "object", properties: Object.fromEntries(Array.from({ length: 10 }, (_, p) => [`p${p}`, { $ref: `#/components/schemas/${next}` }])) }
      : { type: "string" };
  });
  return {
    openapi: "3.0.3",
    info: { title: "Fan-out", version: "1" },
    components: { schemas },
    paths: {
      "/a": {
        get: {
          operationId: "getA",
          responses: { "200": { description: "ok", content: { "application/json": { schema: { $ref: "#/components/schemas/A" } } } } },
        },
      },
    },
  };
}

/**
 * Under 4 KB, and well inside the upload's expansion bound, whose drafts are huge: each operation's body requires
 * five arrays of at least three items, level after level, so a sample body has (5 × 3)^4 leaves of 200 characters
 * (samples stop eight levels down), repeated in every step of every test of every operation.
 */
export function explodingOutputDocument(operations = 4): Record<string, unknown> {
  const levels = ["L0", "L1", "L2", "L3", "L4", "L5"];
  const fields = ["a", "b", "c", "d", "e"];
  const schemas: Record<string, unknown> = {};
  levels.forEach((name, i) => {
    const next = levels[i + 1];
    schemas[name] = next
      ? {
          type: "object",
          required: fields,
          properties: Object.fromEntries(fields.map((f) => [f, { type: "array", minItems: 3, items: { $ref: `#/components/schemas/${next}` } }])),
        }
      : { type: "string", example: `leaf-value-${"x".repeat(200)}` };
  });
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < operations; i++) {
    paths[`/op${i}`] = {
      post: {
        operationId: `op${i}`,
        requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/L0" } } } },
        responses: { "200": { description: "ok", content: { "application/json": { schema: { $ref: "#/components/schemas/L0" } } } } },
      },
    };
  }
  return { openapi: "3.0.3", info: { title: "Exploding output", version: "1" }, components: { schemas }, paths };
}
