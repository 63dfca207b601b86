// Checks a real API response against the OpenAPI document: its status is one the operation declares, and a JSON
// body matches the declared schema. test/helpers/server.ts runs it on every `call`, so every scenario table that
// calls the API is also a contract test.
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import type { ValidateFunction } from "ajv";
import { buildOpenApiDocument } from "../../src/http/openapi";
import { API_PREFIX } from "../../src/manifest";
import { VERSION } from "../../src/version";

type Json = Record<string, unknown>;

interface Route {
  regex: RegExp;
  path: string;
  methods: Record<string, Json>;
}

export class ContractChecker {
  private readonly routes: Route[];
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly doc: Json) {
    const paths = doc.paths as Record<string, Record<string, Json>>;
    this.routes = Object.entries(paths).map(([path, methods]) => ({
      path,
      methods,
      regex: new RegExp(`^${path.replace(/\{\w+\}/g, "[^/]+")}/?$`),
    }));
    // As the router does: a literal segment wins over a parameter (GET /members/invitations is not GET /members/{userId}).
    const params = (path: string) => (path.match(/\{/g) ?? []).length;
    this.routes.sort((a, b) => params(a.path) - params(b.path));
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    // The whole document under one id: response schemas are compiled by pointer, their $refs resolve within it.
    this.ajv.addSchema({ $id: "svc-openapi", paths: doc.paths, components: doc.components });
  }

  /** The problems of one response (empty when it keeps the contract); `path` is below /api/v1/ops. */
  async problems(method: string, path: string, res: Response): Promise<string[]> {
    const pathname = API_PREFIX + (path.split("?")[0] ?? "");
    const route = this.routes.find((r) => r.regex.test(pathname));
    if (!route) return []; // no such route: a plain 404, no operation to hold it to
    const what = `${method} ${pathname} → ${res.status}`;
    const operation = route.methods[method.toLowerCase()];
    if (!operation) {
      return res.status === 405 ? [] : [`${what}: a method the path does not list must be answered 405`];
    }
    const out: string[] = [];
    const responses = operation.responses as Record<string, Json>;
    const declared = responses[String(res.status)];
    if (!declared) return [`${what}: status not declared for ${operation.operationId} (declares ${Object.keys(responses).join(", ")})`];
    if (!res.headers.get("x-request-id")) out.push(`${what}: no X-Request-Id header`);
    if ((res.status === 429 || res.status === 503) && !res.headers.get("retry-after")) out.push(`${what}: no Retry-After header`);
    const content = declared.content as Record<string, { schema: Json }> | undefined;
    const json = content?.["application/json"];
    if (json && (res.headers.get("content-type") ?? "").includes("json")) {
      const validate = this.validatorFor(route.path, method.toLowerCase(), String(res.status));
      const body = await res.clone().json();
      if (!validate(body)) {
        out.push(`${what}: body does not match the declared schema: ${this.ajv.errorsText(validate.errors)} in ${JSON.stringify(body).slice(0, 500)}`);
      }
    }
    return out;
  }

  private validatorFor(path: string, method: string, status: string): ValidateFunction {
    const key = `${method} ${path} ${status}`;
    let v = this.validators.get(key);
    if (!v) {
      const pointer = ["paths", path, method, "responses", status, "content", "application/json", "schema"]
        .map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1"))
        .join("/");
      v = this.ajv.compile({ $ref: `svc-openapi#/${pointer}` });
      this.validators.set(key, v);
    }
    return v;
  }
}

const checkers = new Map<boolean, ContractChecker>();

/** The checker for a server's document (it differs only by whether rate limits are on). */
export function contractChecker(rateLimits: boolean): ContractChecker {
  let c = checkers.get(rateLimits);
  if (!c) {
    c = new ContractChecker(buildOpenApiDocument(VERSION, { rateLimits }));
    checkers.set(rateLimits, c);
  }
  return c;
}
