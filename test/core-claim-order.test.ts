// Which queued runs the server's engine claims: with one project waiting, its runs oldest first in their group
// order, never a run whose environment requires runner labels; with several projects waiting, in turns across them.
import { expect, test } from "bun:test";
import { callOperation } from "../src/core/call";
import type { Principal } from "../src/core/context";
import { claimQueuedRuns } from "../src/core/runs/queue";
import { openTestCore, type TestCore } from "./helpers/core";

// On the test backend (SVC_TEST_BACKEND=postgres too): the claim is each store's own statement.
const openWithProject = () => openTestCore("svc-claim-order-");

async function projectWithAutomations(core: TestCore["core"], as: Principal, slug: string, n: number) {
  await callOperation(core, as, "createProject", { body: { name: slug, slug } });
  await callOperation(core, as, "createEnvironment", { params: { project: slug }, body: { name: "test", variables: { BASE_URL: "http://127.0.0.1:9" } } });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const a = await callOperation(core, as, "createAutomation", {
      params: { project: slug },
      body: { name: `${slug} ${i}`, kind: "http", environment: "test", steps: [{ request: { url: `/items/${i}` } }] },
    });
    ids.push(a.id);
  }
  return ids;
}

test("one project waiting: its runs are claimed in group order, and a run that needs runner labels is left queued", async () => {
  const { core, as, close } = await openWithProject();
  try {
    // A run queued first whose environment requires a runner label: only a remote runner with it may take it.
    await callOperation(core, as, "createProject", { body: { name: "Shop", slug: "shop" } });
    await callOperation(core, as, "createEnvironment", {
      params: { project: "shop" },
      body: { name: "eu", variables: { BASE_URL: "http://127.0.0.1:9" }, runner_labels: ["eu"] },
    });
    const labelled = await callOperation(core, as, "createAutomation", {
      params: { project: "shop" },
      body: { name: "eu only", kind: "http", steps: [{ request: { url: "/health" } }] },
    });
    const eu = await callOperation(core, as, "runAutomation", { params: { project: "shop", automationId: labelled.id }, body: { environment: "eu" } });
    await callOperation(core, as, "createEnvironment", { params: { project: "shop" }, body: { name: "test", variables: { BASE_URL: "http://127.0.0.1:9" } } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const a = await callOperation(core, as, "createAutomation", {
        params: { project: "shop" },
        body: { name: `check ${i}`, kind: "http", environment: "test", steps: [{ request: { url: `/items/${i}` } }] },
      });
      ids.push(a.id);
    }
    // Listed in the group backwards: the group's order, not the automations' age, is the order runs start in.
    const group = await callOperation(core, as, "createGroup", { params: { project: "shop" }, body: { name: "all", automation_ids: [...ids].reverse() } });
    await callOperation(core, as, "runGroup", { params: { project: "shop", groupId: group.id }, body: {} });

    const first = await claimQueuedRuns(core, 2);
    expect(first.map((r) => r.automationId).sort()).toEqual([ids[4], ids[3]].sort() as string[]);
    const rest = await claimQueuedRuns(core, 10);
    expect(rest.map((r) => r.automationId).sort()).toEqual([ids[2], ids[1], ids[0]].sort() as string[]);
    expect(await claimQueuedRuns(core, 10)).toEqual([]);
    const left = await callOperation(core, as, "getRun", { params: { project: "shop", runId: eu.id } });
    expect(left.status).toBe("queued");
  } finally {
    await close();
  }
});

test("several projects waiting: a claim takes runs of each in turns, not the oldest project's backlog", async () => {
  const { core, as, close } = await openWithProject();
  try {
    const shop = await projectWithAutomations(core, as, "shop", 4);
    const mall = await projectWithAutomations(core, as, "mall", 2);
    for (const id of shop) await callOperation(core, as, "runAutomation", { params: { project: "shop", automationId: id }, body: {} });
    for (const id of mall) await callOperation(core, as, "runAutomation", { params: { project: "mall", automationId: id }, body: {} });
    // Runs queued in the same millisecond have no order between them, so which of a project's runs comes is not
    // asserted: how many of each project's do.
    const projects = async (n: number) => (await claimQueuedRuns(core, n)).map((r) => r.projectId).sort();
    const shopId = (await callOperation(core, as, "getProject", { params: { project: "shop" } })).id;
    const mallId = (await callOperation(core, as, "getProject", { params: { project: "mall" } })).id;
    const both = [shopId, mallId].sort();
    expect(await projects(2)).toEqual(both);
    // The next turn of each, then the first project alone.
    expect(await projects(2)).toEqual(both);
    expect(await projects(4)).toEqual([shopId, shopId]);
  } finally {
    await close();
  }
});

test("a large claim on SQLite takes one of a few sizes (one prepared statement each), and the next claims take the rest in order", async () => {
  const { core, as, close } = await openWithProject();
  try {
    const ids = await projectWithAutomations(core, as, "shop", 40);
    const group = await callOperation(core, as, "createGroup", { params: { project: "shop" }, body: { name: "all", automation_ids: ids } });
    await callOperation(core, as, "runGroup", { params: { project: "shop", groupId: group.id }, body: {} });
    // 30 is not one of SQLite's sizes: 28 is (exact up to 16, then four sizes per doubling). PostgreSQL binds the limit.
    const first = await claimQueuedRuns(core, 30);
    expect(first.length).toBe(core.probe.backend === "sqlite" ? 28 : 30);
    const rest = await claimQueuedRuns(core, 30);
    expect(first.length + rest.length).toBe(40);
    expect([...first, ...rest].map((r) => r.automationId).sort()).toEqual([...ids].sort());
    // Group order holds across the two claims: the first took the group's first runs.
    expect(first.map((r) => r.automationId).sort()).toEqual(ids.slice(0, first.length).sort());
    expect(await claimQueuedRuns(core, 30)).toEqual([]);
  } finally {
    await close();
  }
});
