// docs/cli.md's command reference is the command tree as built now (regenerate: bun cli/reference.ts --write).
import { expect, test } from "bun:test";
import { withReference } from "../cli/reference";

test("the generated command reference in docs/cli.md is up to date", async () => {
  const doc = await Bun.file(`${import.meta.dir}/../docs/cli.md`).text();
  expect(doc).toBe(withReference(doc));
  expect(doc).toContain("| `svc automations run <automationId>` |");
  expect(doc).toContain("`--env <value>`");
});
