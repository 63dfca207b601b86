// Importers: what teams already have (a cURL command line) becomes automations.
import { z } from "zod";
import { defineOperation, Name, ProjectParams } from "./define";
import { Automation } from "./records";

export const ImportResult = z
  .object({
    automations: z.array(Automation),
    warnings: z.array(z.object({ request: z.string(), message: z.string() })).describe("What could not be imported, per request"),
  })
  .meta({ id: "ImportResult" });

export const importCurl = defineOperation({
  name: "import_curl",
  method: "POST",
  path: "/projects/{project}/imports/curl",
  summary: "Import a cURL command line as an http automation (method, URL, headers, data, -u, --json)",
  params: ProjectParams,
  body: z.strictObject({
    command: z.string().min(1).max(1_000_000).describe("The command line, as copied (curl … with its quotes)"),
    name: Name.optional().describe("The automation's name (default: METHOD path); suffixed on a name clash"),
  }),
  response: ImportResult,
  successStatus: 201,
  errors: ["not_found"],
  cli: { words: ["import", "curl"], args: ["command"] },
});
