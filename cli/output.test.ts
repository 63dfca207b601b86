import { expect, test } from "bun:test";
import { renderFailures } from "./output";

const plain = { tty: false, color: false } as Parameters<typeof renderFailures>[1];
const run = (name: string, status: string) => ({ id: `run_${name}`, automation_name: name, status, steps: [], error: null });

test("the failures heading counts cancelled runs apart: they did not fail", () => {
  expect(renderFailures([run("a", "failed"), run("b", "passed")], plain).split("\n")[0]).toBe("1 failure:");
  expect(renderFailures([run("a", "cancelled"), run("b", "cancelled")], plain).split("\n")[0]).toBe("2 cancelled:");
  expect(renderFailures([run("a", "failed"), run("b", "error"), run("c", "cancelled")], plain).split("\n")[0]).toBe("2 failures, 1 cancelled:");
  expect(renderFailures([run("a", "passed")], plain)).toBe("");
});
