// Checks an uploaded OpenAPI document of the system under test before it is stored.
import { invalid } from "../../manifest/errors";

/** Returns the document when it looks like OpenAPI 3.x; the generation issue deepens this with a real parser. */
export async function checkOpenApiDocument(doc: Record<string, unknown>): Promise<Record<string, unknown>> {
  const version = doc.openapi;
  if (typeof version !== "string" || !version.startsWith("3.")) {
    throw invalid("openapi must be an OpenAPI 3.x document (its \"openapi\" field must be 3.x)", [
      { path: "openapi.openapi", message: "expected a version string starting with 3." },
    ]);
  }
  if (typeof doc.paths !== "object" || doc.paths === null) {
    throw invalid("openapi document has no paths object", [{ path: "openapi.paths", message: "required" }]);
  }
  return doc;
}
