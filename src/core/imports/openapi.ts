// An OpenAPI 3.x document (or Swagger 2.0, converted first) read by the openapi generator: its drafts become
// automations, its first absolute server URL an environment's BASE_URL, its tags groups.
import { convertObj } from "swagger2openapi";
import { AppError, invalid } from "../../manifest/errors";
import type { HttpStep } from "../../manifest/automation-format";
import type { Config } from "../../../config/schema";
import { openapiGenerator } from "../../generation/openapi/generator";
import { GenerationFailure } from "../../generation/types";
import { checkOpenApiDocument } from "../projects/openapi-document";
import type { ImportPlan } from "./save";

type Obj = Record<string, unknown>;

/** A Swagger 2.0 document converted to OpenAPI 3.0; external `$ref`s are never followed. */
async function asOpenApi3(doc: Obj): Promise<Obj> {
  if (doc.swagger === undefined) return doc;
  if (doc.swagger !== "2.0")
    throw invalid(`swagger ${String(doc.swagger)} is not supported (2.0 is)`, [{ path: "document.swagger", message: 'expected "2.0"' }]);
  try {
    return (await convertObj(structuredClone(doc), { patch: true, warnOnly: true, resolve: false, resolveInternal: false })).openapi;
  } catch (e) {
    const message = (e as Error).message.split("\n")[0] ?? "the conversion failed";
    throw invalid(`the Swagger 2.0 document cannot be converted: ${message}`, [{ path: "document", message }]);
  }
}

/**
 * The first server URL that is absolute once its variables (`{scheme}://host:{port}`) take their defaults; a
 * relative one (`/api`) or one with a variable without a default is passed over.
 */
function firstAbsoluteServer(servers: unknown): string | undefined {
  if (!Array.isArray(servers)) return undefined;
  for (const server of servers) {
    if (server === null || typeof server !== "object" || typeof (server as Obj).url !== "string") continue;
    const variables = ((server as Obj).variables ?? {}) as Record<string, { default?: unknown } | undefined>;
    const url = ((server as Obj).url as string).replace(/\{([^{}]+)\}/g, (whole, name: string) => {
      const d = Object.hasOwn(variables, name) ? variables[name]?.default : undefined;
      return typeof d === "string" || typeof d === "number" ? String(d) : whole;
    });
    if (/^https?:\/\/[^/{}]/i.test(url) && !/[{}]/.test(url)) return url.replace(/\/+$/, "");
  }
  return undefined;
}

export async function readOpenApi(document: Obj, config: Config["generation"], name?: string, baseUrl?: string): Promise<ImportPlan> {
  let doc: Obj;
  try {
    doc = await checkOpenApiDocument(await asOpenApi3(document));
  } catch (e) {
    // The project's check names its field `openapi`; here it is `document`.
    if (e instanceof AppError && e.code === "invalid_request")
      throw invalid(
        e.message.replace(/^openapi\b/, "document"),
        (e.details ?? []).map((d) => ({ ...d, path: d.path.replace(/^openapi\b/, "document") })),
      );
    throw e;
  }
  const info = (doc.info ?? {}) as Obj;
  const title = name ?? (typeof info.title === "string" && info.title.trim() ? info.title.trim() : "Imported API");
  const plan: ImportPlan = { automations: [], groups: [], warnings: [] };
  const base = baseUrl ?? firstAbsoluteServer(doc.servers);
  if (base) plan.environment = { name: title, variables: { BASE_URL: base } };
  else
    plan.warnings.push({
      request: title,
      message: "the document names no absolute server URL: give --base-url, or set BASE_URL in the automations' environment",
    });
  let out: Awaited<ReturnType<typeof openapiGenerator.generate>>;
  try {
    out = await openapiGenerator.generate(
      {
        feature: { id: "import", name: title, description: "", acceptance_criteria: "", target: { kind: "api", tags: [], paths: [] } },
        openapi: doc,
        config,
      },
      { signal: new AbortController().signal, progress: async () => {} },
    );
  } catch (e) {
    if (e instanceof GenerationFailure) throw invalid(e.message, [{ path: "document", message: e.message }]);
    throw e;
  }
  for (const w of out.warnings) plan.warnings.push({ request: w.scenario ?? title, message: w.message });
  const byTag = new Map<string, string[]>();
  out.automations.forEach((d, i) => {
    const ref = String(i);
    plan.automations.push({ ref, name: d.name, description: d.description, steps: d.steps as HttpStep[], tags: d.tags.filter((t) => t !== "generated") });
    for (const t of d.tags) if (t !== "generated" && t !== "openapi") byTag.set(t, [...(byTag.get(t) ?? []), ref]);
  });
  for (const [tag, members] of byTag) plan.groups?.push({ name: tag, description: `Imported from the tag ${tag} of the OpenAPI document ${title}`, members });
  return plan;
}
