// Importers: what teams already have (a cURL command line, a Postman collection, a HAR file, an OpenAPI document) becomes automations.
import { z } from "zod";
import { defineOperation, Name, ProjectParams } from "./define";
import { Automation } from "./records";

export const ImportResult = z
  .object({
    automations: z.array(Automation),
    environment: z
      .object({ id: z.string() })
      .nullable()
      .optional()
      .describe("The environment made of the imported variables, the default environment of the imported automations"),
    groups: z
      .array(z.object({ id: z.string(), name: z.string() }))
      .optional()
      .describe("The groups made of the imported folders"),
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

export const importPostman = defineOperation({
  name: "import_postman",
  method: "POST",
  path: "/projects/{project}/imports/postman",
  summary: "Import a Postman collection (v2.1): each request an automation, folders groups, variables an environment",
  description:
    "Requests keep their method, URL, headers, body and authorization (inherited from folders and the collection). Test scripts' common " +
    "pm.test / pm.expect / pm.response.to.have.status lines become assertions; every other line is a warning for its request. The " +
    "collection's variables become an environment named after the collection, the default environment of every imported automation.",
  params: ProjectParams,
  body: z.strictObject({
    collection: z.record(z.string(), z.unknown()).describe("The collection (its exported JSON); on the command line a file path"),
    name: Name.optional().describe("The name of the environment made of its variables (default: the collection's name)"),
  }),
  response: ImportResult,
  successStatus: 201,
  errors: ["not_found"],
  cli: { words: ["import", "postman"], args: ["collection"] },
});

export const importHar = defineOperation({
  name: "import_har",
  method: "POST",
  path: "/projects/{project}/imports/har",
  summary: "Import a HAR file as one http automation: its requests in order, with captures where a later request reuses an earlier response value",
  params: ProjectParams,
  body: z.strictObject({
    har: z.record(z.string(), z.unknown()).describe("The HAR document (its JSON, with log.entries); on the command line a file path"),
    name: Name.optional().describe("The automation's name (default: the first page's title); suffixed on a name clash"),
  }),
  response: ImportResult,
  successStatus: 201,
  errors: ["not_found"],
  cli: { words: ["import", "har"], args: ["har"] },
});

export const importOpenapi = defineOperation({
  name: "import_openapi",
  method: "POST",
  path: "/projects/{project}/imports/openapi",
  summary: "Import an OpenAPI 3.x or Swagger 2.0 document: the openapi generator's tests of every operation become automations",
  description:
    "Swagger 2.0 is converted to OpenAPI 3.0 first. Each operation gets the tests a generation makes (a valid request, missing required " +
    "fields, no credentials, an unknown id, create then read), saved as automations; the document's first server (or base_url) becomes " +
    "the BASE_URL of an environment named after the document, the default environment of every imported automation; each tag a group.",
  params: ProjectParams,
  body: z.strictObject({
    document: z.record(z.string(), z.unknown()).describe("The OpenAPI 3.x or Swagger 2.0 document; on the command line a JSON or YAML file path"),
    name: Name.optional().describe("The name of the environment (default: the document's title)"),
    base_url: z
      .string()
      .regex(/^https?:\/\/\S+$/, "an http(s) URL")
      .max(2000)
      .optional()
      .describe("The API's base URL, the environment's BASE_URL (default: the document's first server)"),
  }),
  response: ImportResult,
  successStatus: 201,
  errors: ["not_found"],
  cli: { words: ["import", "openapi"], args: ["document"] },
});
