// A TodoMVC-style app written in Gherkin: filling a field found by its placeholder and pressing keys, compiled to a
// browser automation that runs and passes in Chromium against a real local HTTP server; the run's step names read
// as a person would say them.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { automationsOf, createFeature, createProject, generate, json, runToEnd } from "./helpers/gen-flow";
import { startTestServer, type TestServer } from "./helpers/server";

const TODO_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Todos</title></head>
<body>
<section class="todoapp">
  <header><h1>todos</h1>
    <label for="new-todo" style="position:absolute;left:-9999px">New todo</label>
    <input id="new-todo" class="new-todo" placeholder="What needs to be done?" autofocus>
  </header>
  <ul class="todo-list"></ul>
  <footer><span class="todo-count"></span></footer>
</section>
<script>
  const input = document.getElementById("new-todo");
  const list = document.querySelector(".todo-list");
  const count = document.querySelector(".todo-count");
  const todos = [];
  function render() {
    list.replaceChildren(...todos.map((title, i) => {
      const li = document.createElement("li");
      const label = document.createElement("label");
      label.textContent = title;
      const destroy = document.createElement("button");
      destroy.setAttribute("aria-label", "Delete " + title);
      destroy.textContent = "×";
      destroy.onclick = () => { todos.splice(i, 1); render(); };
      li.append(label, destroy);
      return li;
    }));
    count.textContent = todos.length === 1 ? "1 item left" : todos.length + " items left";
  }
  input.addEventListener("keydown", (e) => {
    if (e.key !== "Enter" || input.value.trim() === "") return;
    todos.push(input.value.trim());
    input.value = "";
    render();
  });
  render();
</script>
</body></html>`;

const CRITERIA = `Feature: Todos
  Scenario: Add two todos and delete one
    Given I open "/"
    When I fill the field with placeholder "What needs to be done?" with "milk"
    And I press "Enter"
    And I fill the field with placeholder "What needs to be done?" with "bread"
    And I press "Enter" in the "New todo" field
    Then I should see "milk"
    And I should see "2 items left"
    When I click "Delete milk"
    Then I should see "1 item left"

  Scenario: A key pressed in the field found by its placeholder
    Given I open "/"
    When I fill "New todo" with "eggs"
    And I press "Enter" in the field with placeholder "What needs to be done?"
    Then I should see "1 item left"
    When I press "Sign in"
`;

let t: TestServer;
let site: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  site = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(TODO_PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }) });
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
  site?.stop(true);
});

test("Gherkin with placeholder and key phrases → browser automations that pass in Chromium, with readable step names", async () => {
  const project = await createProject(t, "todos");
  await json(await t.call("POST", `/projects/${project}/environments`, { name: "local", variables: { BASE_URL: `http://127.0.0.1:${site.port}` } }), 201);
  const feature = await createFeature(t, project, { name: "Todos", acceptance_criteria: CRITERIA });
  const g = await generate(t, project, feature, "gherkin");
  expect(g.status).toBe("succeeded");
  // A button's name is not a key: the line is left out with a warning saying what to write instead.
  expect(g.warnings.map((w) => w.message)).toEqual([expect.stringContaining('"Sign in" is not a key')]);
  const [add, placeholder] = await automationsOf(t, project, g);
  expect(add?.steps).toEqual([
    { goto: "/" },
    { fill: { locator: 'placeholder="What needs to be done?"', value: "milk" } },
    { press: "Enter" },
    { fill: { locator: 'placeholder="What needs to be done?"', value: "bread" } },
    { press: { locator: 'label="New todo"', key: "Enter" } },
    { expect: { text: "milk" } },
    { expect: { text: "2 items left" } },
    { click: 'button="Delete milk"' },
    { expect: { text: "1 item left" } },
  ]);
  expect(placeholder?.steps.slice(1, 3)).toEqual([
    { fill: { locator: 'label="New todo"', value: "eggs" } },
    { press: { locator: 'placeholder="What needs to be done?"', key: "Enter" } },
  ]);
  const runs = [];
  for (const a of [add, placeholder]) {
    const run = await runToEnd(t, project, a?.id ?? "", "local");
    runs.push(run);
    expect({ name: a?.name, status: run.status, error: run.error }).toEqual({ name: a?.name, status: "passed", error: null });
  }
  expect(runs[0]?.steps?.map((s) => s.name)).toEqual([
    "goto /",
    'fill placeholder "What needs to be done?"',
    "press Enter",
    'fill placeholder "What needs to be done?"',
    'press Enter in "New todo"',
    'expect text "milk"',
    'expect text "2 items left"',
    'click "Delete milk"',
    'expect text "1 item left"',
  ]);
}, 120_000);
