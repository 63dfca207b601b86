import { expect, test } from "bun:test";
import { outlinePage } from "./page-outline";

const fieldsOf = (form: string) => outlinePage(`<html><body><form>${form}</form></body></html>`, "http://shop.test/").forms[0]?.fields;

test("a field is found by its label, else its placeholder, else its name", () => {
  expect(
    fieldsOf(`<label for="e">Email</label><input id="e" name="email"><input placeholder="Search" name="q"><label>Password <input type="password" name="pw"></label>
      <input name="code"><input type="submit" value="Go">`),
  ).toEqual([
    { locator: 'label="Email"', describe: '"Email"' },
    { locator: 'placeholder="Search"', describe: 'the one with placeholder "Search"' },
    { locator: 'label="Password"', describe: '"Password"' },
    { locator: 'css=input[name="code"]', describe: 'input "code"' },
  ]);
});

test("a select or textarea inside its label is found by its name: the label's text would run on into its options", () => {
  expect(
    fieldsOf(`<label>Sort by <select name="sort"><option>Newest</option><option>Title</option></select></label>
      <label>Notes <textarea name="notes">Hello</textarea></label><label for="c">Country</label><select id="c" name="country"><option>NL</option></select>
      <label>Empty <textarea name="bio"></textarea></label>`),
  ).toEqual([
    { locator: 'css=select[name="sort"]', describe: 'select "sort"' },
    { locator: 'css=textarea[name="notes"]', describe: 'textarea "notes"' },
    { locator: 'label="Country"', describe: '"Country"' },
    { locator: 'label="Empty"', describe: '"Empty"' },
  ]);
});
