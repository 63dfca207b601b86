import { expect, test } from "bun:test";
import { compileCriteria } from "./generator";

test("a data table under a line is said not to be read, once per line, and the line is still compiled", () => {
  const out = compileCriteria(
    "Books",
    [
      "Feature: Books",
      "  Background:",
      '    Given I open "/books"',
      "      | title |",
      "      | Dune  |",
      "  Scenario: List",
      '    Then I should see "Books"',
      "      | Dune |",
      "  Scenario: Again",
      '    Then I should see "Books"',
    ].join("\n"),
  );
  expect(out.automations).toHaveLength(2);
  expect(out.warnings).toEqual([
    expect.objectContaining({ line: 3, message: expect.stringContaining('the data table under "Given I open "/books"" is not read') }),
    expect.objectContaining({ line: 7, scenario: "List", message: expect.stringContaining("write one line per row") }),
  ]);
});
