// A small web shop the generation tests generate automations for: HTML pages, a JSON API and its OpenAPI document.
import type { Server } from "bun";

export interface TargetApp {
  url: string;
  /** The API's base URL (the OpenAPI document's server). */
  apiUrl: string;
  openapi: Record<string, unknown>;
  stop(): Promise<void>;
}

export interface TargetOptions {
  /** Serves item prices as strings, against the documented schema (number). */
  brokenItemSchema?: boolean;
}

const TOKEN = "test-token";

const page = (title: string, body: string) =>
  new Response(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`, {
    headers: { "content-type": "text/html; charset=utf-8" },
  });

const PAGES: Record<string, () => Response> = {
  "/": () =>
    page(
      "Acme Shop",
      `<h1>Acme Shop</h1><h2>Featured items</h2><nav><a href="/login">Sign in</a> <a href="/about">About</a>
      <a href="/about#team">Our team</a> <a href="https://example.invalid/elsewhere">Elsewhere</a> <a href="mailto:shop@acme.test">Mail us</a></nav>`,
    ),
  // The heading says "Sign in" too: the button must still be found by its role.
  "/login": () =>
    page(
      "Sign in - Acme",
      `<h1>Sign in</h1><form method="post" action="/login">
      <label for="email">Email</label><input id="email" name="email" type="email">
      <label for="password">Password</label><input id="password" name="password" type="password">
      <button type="submit">Sign in</button></form><p><a href="/">Home</a></p>`,
    ),
  // Clickable text that is neither a button nor a link: `I click "…"` falls back to it.
  "/dashboard": () =>
    page(
      "Dashboard - Acme",
      `<h1>Welcome</h1><p>Your orders will show here.</p>
      <span onclick="document.getElementById('history').hidden = false">Show details</span><p id="history" hidden>Order history</p>`,
    ),
  "/about": () =>
    page(
      "About Acme",
      `<h1>About us</h1><h2 id="team">Our team</h2><form action="/search"><input name="q" placeholder="Search"><select name="sort"><option>new</option></select></form><a href="/">Home</a>`,
    ),
};

interface Item {
  id: number;
  name: string;
  price: number;
}

export function targetOpenApi(): Record<string, unknown> {
  const Item = {
    type: "object",
    required: ["id", "name", "price"],
    properties: { id: { type: "integer", example: 1 }, name: { type: "string", example: "Widget" }, price: { type: "number", example: 2.5 } },
  };
  const ErrorSchema = { type: "object", required: ["error"], properties: { error: { type: "string" } } };
  return {
    openapi: "3.0.3",
    info: { title: "Acme Shop API", version: "1.0.0" },
    servers: [{ url: "/api" }],
    components: {
      schemas: {
        Item,
        NewItem: {
          type: "object",
          required: ["name", "price"],
          properties: { name: { type: "string", example: "Gadget" }, price: { type: "number", minimum: 0, example: 3 } },
        },
        Error: ErrorSchema,
      },
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    },
    paths: {
      "/items": {
        get: {
          tags: ["items"],
          operationId: "listItems",
          summary: "List items",
          responses: {
            "200": { description: "items", content: { "application/json": { schema: { type: "array", items: { $ref: "#/components/schemas/Item" } } } } },
          },
        },
        post: {
          tags: ["items"],
          operationId: "createItem",
          summary: "Create an item",
          requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/NewItem" } } } },
          responses: {
            "201": { description: "created", content: { "application/json": { schema: { $ref: "#/components/schemas/Item" } } } },
            "400": { description: "invalid", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
          },
        },
      },
      "/items/{id}": {
        get: {
          tags: ["items"],
          operationId: "getItem",
          summary: "Read an item",
          parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" }, example: 1 }],
          responses: {
            "200": { description: "the item", content: { "application/json": { schema: { $ref: "#/components/schemas/Item" } } } },
            "404": { description: "no such item", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
          },
        },
      },
      "/profile": {
        get: {
          tags: ["profile"],
          operationId: "getProfile",
          summary: "The caller's profile",
          security: [{ bearer: [] }],
          responses: {
            "200": {
              description: "profile",
              content: { "application/json": { schema: { type: "object", required: ["user"], properties: { user: { type: "string" } } } } },
            },
            "401": { description: "no credentials" },
          },
        },
      },
    },
  };
}

export function startTargetApp(options: TargetOptions = {}): TargetApp {
  const items = new Map<number, Item>([[1, { id: 1, name: "Widget", price: 2.5 }]]);
  let nextId = 2;
  const show = (i: Item) => (options.brokenItemSchema ? { ...i, price: String(i.price) } : i);
  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const path = url.pathname;
      if (req.method === "GET" && PAGES[path]) return (PAGES[path] as () => Response)();
      if (req.method === "POST" && path === "/login") {
        const form = await req.formData();
        if (String(form.get("email") ?? "") === "" || form.get("password") !== "secret") return page("Sign in - Acme", "<h1>Wrong email or password</h1>");
        return Response.redirect(`${url.origin}/dashboard`, 303);
      }
      if (path === "/api/items" && req.method === "GET") return Response.json([...items.values()].map(show));
      if (path === "/api/items" && req.method === "POST") {
        const body = (await req.json().catch(() => null)) as Partial<Item> | null;
        if (!body || typeof body.name !== "string" || typeof body.price !== "number")
          return Response.json({ error: "name and price are required" }, { status: 400 });
        const item = { id: nextId++, name: body.name, price: body.price };
        items.set(item.id, item);
        return Response.json(show(item), { status: 201 });
      }
      const m = /^\/api\/items\/([^/]+)$/.exec(path);
      if (m && req.method === "GET") {
        const item = items.get(Number(m[1]));
        return item ? Response.json(show(item)) : Response.json({ error: "no such item" }, { status: 404 });
      }
      if (path === "/api/profile" && req.method === "GET") {
        if (req.headers.get("authorization") !== `Bearer ${TOKEN}`) return Response.json({ error: "unauthorized" }, { status: 401 });
        return Response.json({ user: "tester" });
      }
      return new Response("not found", { status: 404 });
    },
  });
  const url = `http://127.0.0.1:${server.port}`;
  return { url, apiUrl: `${url}/api`, openapi: targetOpenApi(), stop: () => server.stop(true) };
}

export const TARGET_API_TOKEN = TOKEN;

/** Acceptance criteria for the shop: the link and the button share the words "Sign in" with a heading. */
export const SHOP_CRITERIA = `Feature: Shop
  Scenario: Sign in works
    Given I open "/"
    When I click "Sign in"
    Then the URL should be "/login"
    When I fill "Email" with "a@b.c"
    And I fill "Password" with "secret"
    And I click "Sign in"
    Then I should see "Welcome"
    And the URL should be "/dashboard"
    When I click "Show details"
    Then I should see "Order history"

  Scenario: Read an item
    When I send GET "/api/items/1"
    Then the response status should be 200
    And the response field "id" should be 1
    And the response field "name" should be "Widget"
    And the response header "content-type" should contain "json"

  Scenario: Create an item
    When I send POST "/api/items" with body:
      """
      {"name": "Gadget", "price": 3}
      """
    Then the response status should be 201
    And the response field "name" should be "Gadget"
    But I frobnicate the response "x"

  Scenario Outline: Item <id> answers <status>
    When I send GET "/api/items/<id>"
    Then the response status should be <status>

    Examples:
      | id  | status |
      | 1   | 200    |
      | 999 | 404    |
`;
