// Gherkin generation through the real server: scenarios, an outline and an unknown phrase become the right
// draft automations and one precise warning; the job's states, regeneration and crash recovery.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../config/load";
import { openCore } from "../src/core";
import { createGenerationEngine } from "../src/generation/engine";
import { automationsOf, createFeature, createProject, generate, json, waitForGeneration } from "./helpers/gen-flow";
import { SHOP_CRITERIA } from "./helpers/gen-target-app";
import { startTestServer, type TestServer } from "./helpers/server";

let t: TestServer;
let project: string;

beforeAll(async () => {
  t = await startTestServer();
  project = await createProject(t, "shop");
});
afterAll(async () => {
  await t.stop();
});

describe("gherkin generation", () => {
  test("scenarios, an outline and an unknown phrase → one automation per scenario/row and one precise warning", async () => {
    const feature = await createFeature(t, project, { name: "Shop basics", acceptance_criteria: SHOP_CRITERIA });
    const g = await generate(t, project, feature);
    expect(g.status).toBe("succeeded");
    expect(g.error).toBeNull();
    expect(g.progress.stage).toBe("done");
    expect(g.started_at).not.toBeNull();
    expect(g.finished_at).not.toBeNull();
    const autos = await automationsOf(t, project, g);
    expect(autos.map((a) => a.name)).toEqual(["Sign in works", "Read an item", "Create an item", "Item 1 answers 200", "Item 999 answers 404"]);
    for (const a of autos) {
      expect(a.status).toBe("draft");
      expect(a.source).toBe("generated");
      expect(a.feature_id).toBe(feature);
      expect(a.generation_id).toBe(g.id);
    }
    const [signIn, read, create, row1, row2] = autos;
    expect(signIn?.kind).toBe("browser");
    expect(signIn?.steps.slice(0, 4)).toEqual([
      { goto: "/" },
      { click: 'button="Sign in"' },
      { expect: { url: "/login" } },
      { fill: { locator: 'label="Email"', value: "a@b.c" } },
    ]);
    expect(signIn?.steps.slice(-3)).toEqual([{ expect: { url: "/dashboard" } }, { click: 'button="Show details"' }, { expect: { text: "Order history" } }]);
    // The public locator form of the step format, never Playwright's internal selector chain.
    expect(JSON.stringify(autos.map((a) => a.steps))).not.toContain("internal:");
    expect(read?.kind).toBe("http");
    expect(read?.steps).toEqual([
      {
        name: "GET /api/items/1",
        request: { method: "GET", url: "/api/items/1" },
        expect: [{ status: 200 }, { json: "$.id", equals: 1 }, { json: "$.name", equals: "Widget" }, { header: "content-type", contains: "json" }],
      },
    ]);
    expect(create?.steps).toEqual([
      {
        name: "POST /api/items",
        request: { method: "POST", url: "/api/items", json: { name: "Gadget", price: 3 } },
        expect: [{ status: 201 }, { json: "$.name", equals: "Gadget" }],
      },
    ]);
    expect(create?.description).toContain('line 28 "But I frobnicate the response "x""');
    expect(row1?.steps[0]).toMatchObject({ request: { url: "/api/items/1" }, expect: [{ status: 200 }] });
    expect(row2?.steps[0]).toMatchObject({ request: { url: "/api/items/999" }, expect: [{ status: 404 }] });

    expect(g.warnings).toHaveLength(1);
    const w = g.warnings[0];
    expect(w).toMatchObject({ generator: "gherkin", scenario: "Create an item", line: 28, text: 'But I frobnicate the response "x"' });
    expect(w?.suggestion).toBeString();
    expect(w?.message).toContain("Line 28");
    expect(w?.message).toContain("frobnicate");
  });

  test("criteria starting at Scenario: (no Feature line) keep their own line numbers; a request whose check was not understood makes no draft", async () => {
    const criteria = `Scenario: Health\n  When I send GET "/health"\n  Then the status is fine\n`;
    const feature = await createFeature(t, project, { name: "Health", acceptance_criteria: criteria });
    const g = await generate(t, project, feature, "gherkin");
    expect(g.status).toBe("succeeded");
    // It would check nothing, and pass against a service that answers 500.
    expect(g.automation_ids).toHaveLength(0);
    expect(g.warnings).toEqual([
      expect.objectContaining({ line: 3, text: "Then the status is fine", suggestion: "the response status should be 200" }),
      expect.objectContaining({ line: 1, message: expect.stringContaining('No automation for scenario "Health": it would send a request and check nothing') }),
    ]);
    // Written without a check at all, a request is expected to succeed.
    const bare = await createFeature(t, project, { name: "Bare", acceptance_criteria: `Scenario: Ping\n  When I send GET "/health"\n` });
    const b = await generate(t, project, bare, "gherkin");
    expect(b.automation_ids).toHaveLength(1);
    const draft = (await (await t.call("GET", `/projects/${project}/automations/${b.automation_ids[0]}`)).json()) as { steps: { expect?: unknown[] }[] };
    expect(draft.steps[0]?.expect).toEqual([{ status: { lt: 400 } }]);
  });

  test("a scenario with nothing usable is not created, with a warning saying why; the job still succeeds", async () => {
    const criteria = `Feature: F\n  Scenario: Vague\n    Given the shop is nice\n    Then the response status should be 200\n  Scenario: Fine\n    Given I open "/"\n`;
    const feature = await createFeature(t, project, { name: "Vague", acceptance_criteria: criteria });
    const g = await generate(t, project, feature);
    expect(g.status).toBe("succeeded");
    expect(g.automation_ids).toHaveLength(1);
    expect(g.warnings.map((w) => w.line)).toEqual([3, 4, 2]);
    expect(g.warnings[1]?.message).toContain("no request was sent before it");
    expect(g.warnings[2]?.message).toContain('No automation for scenario "Vague"');
  });

  test("the gherkin strategy without Gherkin criteria fails clearly; auto with no input at all fails clearly", async () => {
    const feature = await createFeature(t, project, { name: "Plain", acceptance_criteria: "- users can sign in\n- users can sign out" });
    const g = await generate(t, project, feature, "gherkin");
    expect(g.status).toBe("failed");
    expect(g.error).toContain("the gherkin strategy cannot run: the feature's acceptance criteria contain no Gherkin scenario");
    const g2 = await generate(t, project, feature);
    expect(g2.status).toBe("failed");
    expect(g2.error).toContain("nothing to generate from");
  });

  test("invalid Gherkin is a warning quoting the parser, not a crash", async () => {
    const feature = await createFeature(t, project, {
      name: "Broken",
      acceptance_criteria: `Feature: X\n  Scenario: A\n    Given I open "/"\n  Scenario B\n    | a |\n`,
    });
    const g = await generate(t, project, feature, "gherkin");
    expect(g.status).toBe("succeeded");
    expect(g.automation_ids).toEqual([]);
    expect(g.warnings[0]?.message).toContain("not valid Gherkin");
    expect(g.warnings[0]?.message).toContain("(line 4, column 3)");
    expect(g.warnings[0]?.message).toContain("got 'Scenario B'");
    const empty = await createFeature(t, project, {
      name: "No rows",
      acceptance_criteria: `Feature: X\n  Scenario Outline: A <a>\n    Given I open "<a>"\n  Examples:\n    | a |\n`,
    });
    const g2 = await generate(t, project, empty, "gherkin");
    expect(g2.automation_ids).toEqual([]);
    expect(g2.warnings).toEqual([expect.objectContaining({ line: 2, message: 'No automation for scenario "A <a>": its Examples table has no rows' })]);
  });

  test("an outline line naming a column its Examples lack, or an outline without Examples, is a warning naming the line", async () => {
    const criteria = [
      "Feature: Books",
      "  Scenario Outline: Read book <id>",
      '    When I send GET "/api/books/<bookid>"',
      "    Then the response status should be 200",
      "    Examples:",
      "      | id |",
      "      | b1 |",
      "      | b2 |",
      "  Scenario Outline: List books",
      '    When I send GET "/api/books?genre=<genre>"',
      "    Then the response status should be 200",
      "",
    ].join("\n");
    const feature = await createFeature(t, project, { name: "Placeholders", acceptance_criteria: criteria });
    const g = await generate(t, project, feature, "gherkin");
    expect(g.status).toBe("succeeded");
    expect(g.automation_ids).toHaveLength(3);
    // One warning per line, not one per example row.
    expect(g.warnings).toEqual([
      expect.objectContaining({
        line: 3,
        scenario: "Read book <id>",
        message:
          'Line 3 of scenario "Read book <id>": <bookid> is not filled in, as its Examples have the columns id; the line is used as written, with <bookid> in it',
      }),
      expect.objectContaining({ line: 10, message: expect.stringContaining("<genre> is not filled in, as it has no Examples table") }),
    ]);
  });

  test("scenarios carry the tags of their Feature, Rule and Examples, as in Cucumber", async () => {
    const criteria = [
      "@catalogue",
      "Feature: Books",
      "  @smoke",
      "  Scenario Outline: Look up book <id>",
      '    When I send GET "/api/books/<id>"',
      "    Then the response status should be 200",
      "    @known",
      "    Examples:",
      "      | id |",
      "      | b1 |",
      "    Examples:",
      "      | id |",
      "      | b2 |",
      "  @admin",
      "  Rule: Deleting",
      "    Scenario: Delete a book",
      '      When I send DELETE "/api/books/b1"',
      "      Then the response status should be 204",
      "",
    ].join("\n");
    const feature = await createFeature(t, project, { name: "Tagged", acceptance_criteria: criteria });
    const g = await generate(t, project, feature, "gherkin");
    expect(g.warnings).toEqual([]);
    expect((await automationsOf(t, project, g)).map((a) => [a.name, a.tags])).toEqual([
      ["Look up book b1", ["generated", "gherkin", "catalogue", "smoke", "known"]],
      ["Look up book b2", ["generated", "gherkin", "catalogue", "smoke"]],
      ["Delete a book", ["generated", "gherkin", "catalogue", "admin"]],
    ]);
  });

  test("a Background repeated in front of thousands of scenarios is bounded: the generation stops with a warning saying where", async () => {
    const background = Array.from({ length: 300 }, (_, i) => `    Given I open "/p${i}"`).join("\n");
    const scenarios = Array.from({ length: 2000 }, (_, i) => `  Scenario: S${i}\n    Then I should see "x"`).join("\n");
    const criteria = `Feature: Big\n  Background:\n${background}\n${scenarios}\n`;
    expect(criteria.length).toBeLessThan(200_000);
    const feature = await createFeature(t, project, { name: "Big background", acceptance_criteria: criteria });
    const g = await generate(t, project, feature, "gherkin");
    expect(g.status).toBe("succeeded");
    // 301 lines each: the first 332 scenarios fit in 100000 lines.
    expect(g.automation_ids).toHaveLength(332);
    expect(g.warnings).toEqual([
      expect.objectContaining({
        line: 303 + 2 * 332,
        scenario: "S332",
        message:
          'Stopped at scenario "S332" (line 967): the scenarios hold more than 100000 step lines with their Background and example rows (the limit for one generation); it and the scenarios after it made no automation',
      }),
    ]);
  }, 60_000);

  test("generating again replaces unedited drafts and keeps edited or activated ones, and says so", async () => {
    const feature = await createFeature(t, project, { name: "Regen", acceptance_criteria: SHOP_CRITERIA });
    const first = await generate(t, project, feature);
    const [a, b, c] = first.automation_ids;
    await json(await t.call("PATCH", `/projects/${project}/automations/${a}`, { description: "tuned by hand" }), 200);
    await json(await t.call("PATCH", `/projects/${project}/automations/${b}`, { status: "active" }), 200);
    const second = await generate(t, project, feature);
    expect(second.status).toBe("succeeded");
    expect(second.result).toContain("replaced 3 unedited drafts");
    expect(second.result).toContain("kept 2 edited or activated automations");
    expect((await t.call("GET", `/projects/${project}/automations/${a}`)).status).toBe(200);
    expect((await t.call("GET", `/projects/${project}/automations/${b}`)).status).toBe(200);
    expect((await t.call("GET", `/projects/${project}/automations/${c}`)).status).toBe(404);
    const list = await json<{ data: { generation_id: string }[] }>(await t.call("GET", `/projects/${project}/automations?feature=${feature}&limit=200`), 200);
    expect(list.data).toHaveLength(7);
    expect(list.data.filter((x) => x.generation_id === second.id)).toHaveLength(5);
  });

  test("another workspace cannot read or start the generation", async () => {
    const feature = await createFeature(t, project, { name: "Private", acceptance_criteria: SHOP_CRITERIA });
    await generate(t, project, feature);
    const other = await t.userWithKey("eve@other.test", "other");
    expect((await t.call("GET", `/projects/${project}/features/${feature}/generation`, undefined, other.key)).status).toBe(404);
    expect((await t.call("POST", `/projects/${project}/features/${feature}/generation`, {}, other.key)).status).toBe(404);
  });
});

describe("the job's life", () => {
  test("a job left running by a crash ends failed when the engine starts", async () => {
    const feature = await createFeature(t, project, { name: "Crash", acceptance_criteria: SHOP_CRITERIA });
    const g = await generate(t, project, feature);
    const database = t.databaseUrl ? { "database.url": t.databaseUrl } : {};
    const core = await openCore(loadConfig({ env: {}, flags: { data_dir: t.dataDir, log_level: "silent", ...database } }));
    try {
      await t.sql("UPDATE generations SET status = 'running', finished_at = NULL WHERE id = ?", g.id);
      const engine = createGenerationEngine(core);
      await engine.start();
      await engine.stop(0);
    } finally {
      await core.close();
    }
    const after = await waitForGeneration(t, project, feature);
    expect(after.status).toBe("failed");
    expect(after.error).toContain("interrupted by server restart");
  });

  test("bad strategy is a 400 and changes nothing", async () => {
    const feature = await createFeature(t, project, { name: "Bad strategy", acceptance_criteria: SHOP_CRITERIA });
    const res = await t.call("POST", `/projects/${project}/features/${feature}/generation`, { strategy: "magic" });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("invalid_request");
    expect((await t.call("GET", `/projects/${project}/features/${feature}/generation`)).status).toBe(404);
  });
});
