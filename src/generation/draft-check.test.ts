// A generated draft's name and tags come from documents and pages: they are made names the API accepts.
import { expect, test } from "bun:test";
import { checkDraft } from "./draft-check";

const draft = (name: string, tags: string[] = []) => ({ name, kind: "http", steps: [{ request: { url: "/items" } }], tags });

test("control characters leave a draft's name and tags, line breaks and tabs become spaces", () => {
  const checked = checkDraft(draft("list\u001b]0;pwned\u0007 items\n(v2)\t", ["smoke\u202e", "\u0000"]));
  expect(checked).toMatchObject({ draft: { name: "list]0;pwned items (v2)", tags: ["smoke"] } });
});

test("a name of control characters alone is a problem, not an empty name", () => {
  expect(checkDraft(draft("\u001b\u0007"))).toEqual({ problems: [{ path: "name", message: "nothing is left of the name without its control characters" }] });
});
