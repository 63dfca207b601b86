// swagger2openapi ships no types: the one call used (a Swagger 2.0 object in, an OpenAPI 3.0 object out).
declare module "swagger2openapi" {
  export function convertObj(
    swagger: unknown,
    options: { patch?: boolean; warnOnly?: boolean; resolve?: boolean; resolveInternal?: boolean },
  ): Promise<{ openapi: Record<string, unknown> }>;
}
