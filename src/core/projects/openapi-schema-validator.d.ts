// The OpenAPI schema check inside @apidevtools/swagger-parser, which ships no types for it: throws a SyntaxError
// listing what the document breaks ("#/info must have required property 'version'").
declare module "@apidevtools/swagger-parser/lib/validators/schema.js" {
  export default function validateOpenApiSchema(api: unknown): void;
}
