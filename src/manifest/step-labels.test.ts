// Steps and locators as a person reads them, and names recorded by earlier versions made readable.
import { describe, expect, test } from "bun:test";
import type { BrowserStep } from "./automation-format";
import { browserStepLabel, locatorLabel, readableStepName, stepLabel } from "./step-labels";

describe("locatorLabel", () => {
  test.each([
    ['role=button[name="Sign in"]', '"Sign in"'],
    ["role=link[name='Home']", '"Home"'],
    ['role=heading[name="About us"]', 'heading "About us"'],
    ["role=navigation", "navigation"],
    ['button="Sign in"', '"Sign in"'],
    ['label="Email"', '"Email"'],
    ["label=Email", '"Email"'],
    ['text="Read more"', 'text "Read more"'],
    ['placeholder="What needs to be done?"', 'placeholder "What needs to be done?"'],
    ["testid=row", 'test id "row"'],
    ['css=input[name="q"]', 'input[name="q"]'],
    ["#main > li", "#main > li"],
    ['internal:role=button[name="Login"s] >> internal:or="internal:role=link[name=\\"Login\\"s]"', '"Login"'],
    ['internal:text="Hello"i', 'text "Hello"'],
    ['internal:attr=[placeholder="Search"i]', 'placeholder "Search"'],
  ])("%s → %s", (locator, label) => {
    expect(locatorLabel(locator)).toBe(label);
  });
});

describe("step labels", () => {
  test.each<[BrowserStep, string]>([
    [{ click: 'button="Sign in"' }, 'click "Sign in"'],
    [{ fill: { locator: 'label="Email"', value: "a@b.c" } }, 'fill "Email"'],
    [{ expect: { text: "Welcome" } }, 'expect text "Welcome"'],
    [{ expect: { visible: 'role=heading[name="About us"]' } }, 'expect visible heading "About us"'],
    [{ expect: { count: { locator: "testid=row", equals: 3 } } }, 'expect count 3 of test id "row"'],
    [{ press: { locator: 'placeholder="New"', key: "Enter" } }, 'press Enter in placeholder "New"'],
    [{ press: "Tab" }, "press Tab"],
    [{ wait_for: { text: "Saved" } }, 'wait for text "Saved"'],
    [{ goto: "/login" }, "goto /login"],
  ])("%j → %s", (step, label) => {
    expect(browserStepLabel(step)).toBe(label);
  });

  test("a step's own name wins; a request reads as its method and URL", () => {
    expect(stepLabel({ name: "Open the cart", click: "#cart" })).toBe("Open the cart");
    expect(stepLabel({ request: { method: "GET", url: "/items" } })).toBe("GET /items");
  });
});

describe("readableStepName", () => {
  test.each([
    [
      'click internal:role=button[name="Login"s] >> internal:or="internal:role=link[name=\\"Login\\"s]" >> internal:or="css=html >> internal:has-not=\\"x\\" >> internal:text=\\"Login\\"s"',
      'click "Login"',
    ],
    ['fill label="Email"', 'fill "Email"'],
    ['expect visible "role=heading[name="About us"]"', 'expect visible heading "About us"'],
    ['click "Sign in"', 'click "Sign in"'],
    ["GET /items", "GET /items"],
    ["Open the cart", "Open the cart"],
  ])("%s → %s", (name, readable) => {
    expect(readableStepName(name)).toBe(readable);
  });
});
