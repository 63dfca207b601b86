// Checks an uploaded OpenAPI document of the system under test with a real OpenAPI parser before it is stored.
import SwaggerParser from "@apidevtools/swagger-parser";
import validateOpenApiSchema from "@apidevtools/swagger-parser/lib/validators/schema.js";
import { invalid } from "../../manifest/errors";
import { expansionProblem } from "./openapi-expansion";

/**
 * Returns the document when it is a valid OpenAPI 3.x document within the expansion bounds. External `$ref`s are
 * not followed: resolving them would make the server read files or URLs named by whoever uploads the document.
 * Nothing here dereferences the document: its `$ref`s are measured (linear in the document as written) and the
 * document is checked against the OpenAPI schema as written, so a small document that expands exponentially costs
 * no more than its size.
 */
export async function checkOpenApiDocument(doc: Record<string, unknown>): Promise<Record<string, unknown>> {
  const version = doc.openapi;
  if (typeof version !== "string" || !version.startsWith("3.")) {
    throw invalid('openapi must be an OpenAPI 3.x document (its "openapi" field must be 3.x)', [
      { path: "openapi.openapi", message: "expected a version string starting with 3." },
    ]);
  }
  const problem = expansionProblem(doc);
  if (problem) {
    throw invalid(`openapi is not a valid OpenAPI document: ${problem.message}`, [
      { path: problem.path ? `openapi.${problem.path}` : "openapi", message: problem.message },
    ]);
  }
  try {
    // The parser checks the version it supports; the schema check reads the document without changing it.
    await SwaggerParser.parse(structuredClone(doc) as never);
    validateOpenApiSchema(doc);
  } catch (e) {
    const message = (e as Error).message.split("\n").slice(0, 6).join(" ").replace(/\s+/g, " ").trim();
    throw invalid(`openapi is not a valid OpenAPI document: ${message}`, [{ path: "openapi", message }]);
  }
  return doc;
}
