// The nearest phrase suggested for a line that matched none.
import { expect, test } from "bun:test";
import { nearestPhrase } from "./suggest";

test.each([
  ["the status is 200", "the response status should be 200"],
  ['I type "Email" with "a@b.c"', 'I fill "Email" with "a@b.c"'],
  ['I press "Sign in"', 'I click "Sign in"'],
  ['I go to "/login"', 'I open "/login"'],
  ['the response header "x" has "y"', 'the response header "content-type" should contain "json"'],
  ['I send a GET to "/items"', 'I send GET "/items/1"'],
])("%s → %s", (line, phrase) => {
  expect(nearestPhrase(line)).toBe(phrase);
});
