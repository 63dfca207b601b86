// Checks an uploaded OpenAPI document of the system under test with a real OpenAPI parser before it is stored.
import SwaggerParser from "@apidevtools/swagger-parser";
import { invalid } from "../../manifest/errors";

/**
 * Returns the document when it is a valid OpenAPI 3.x document. External `$ref`s are not followed: resolving
 * them would make the server read files or URLs named by whoever uploads the document.
 */
export async function checkOpenApiDocument(doc: Record<string, unknown>): Promise<Record<string, unknown>> {
  const version = doc.openapi;
  if (typeof version !== "string" || !version.startsWith("3.")) {
    throw invalid("openapi must be an OpenAPI 3.x document (its \"openapi\" field must be 3.x)", [
      { path: "openapi.openapi", message: "expected a version string starting with 3." },
    ]);
  }
  try {
    // The parser dereferences in place: give it a copy so the stored document keeps its $refs.
    await SwaggerParser.validate(structuredClone(doc) as never, { resolve: { external: false } });
  } catch (e) {
    const message = (e as Error).message.split("\n").slice(0, 6).join(" ").replace(/\s+/g, " ").trim();
    throw invalid(`openapi is not a valid OpenAPI document: ${message}`, [{ path: "openapi", message }]);
  }
  return doc;
}
