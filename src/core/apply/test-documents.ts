// `svc test DIR`: a folder's automations run without being saved, once the folder is checked as svc apply checks it.
import type { ops } from "../../manifest";
import { FEATURE_RUN_MAX } from "../../manifest/define";
import { conflict, invalid } from "../../manifest/errors";
import { readAllDocuments } from "../../reader-thread";
import { newId } from "../../security/ids";
import type { OpContext } from "../context";
import type { Handler } from "../handler";
import { startOnce } from "../idempotency";
import { runOptions, startGroupRun } from "../runs/operations";
import type { RunnableAutomation } from "../runs/run-rows";
import { resolveProject } from "../scope";
import { type Parsed, problemAt } from "./documents";
import { planFolder } from "./operations";
import * as store from "./store";

type Of<T extends Parsed["type"]> = Extract<Parsed, { type: T }>;

/**
 * `svc test DIR`: the documents' automations run as one group run with trigger "test", without saving anything.
 * Each run carries its own snapshot (as every run does) and a `tst_` automation id that names no automation, so
 * no automation's last run, health, history or alert state moves; retention prunes them as any other runs.
 */
export const testDocuments: Handler<typeof ops.testDocuments> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  const read = await readAllDocuments(body.documents, undefined, ctx.principal.workspaceId);
  const runnable = read.parsed.filter((d): d is Of<"automation"> => d.type === "automation" && d.body.status !== "disabled");
  // The runs are the test's, not the caller's usual trigger: that is what keeps them out of health and alerts.
  const testCtx: OpContext = { ...ctx, principal: { ...ctx.principal, trigger: "test" } };
  const { answer, started } = await startOnce(testCtx, async (trx) => {
    // The check a pull request runs before svc apply: a folder svc apply would refuse for what it holds (its groups'
    // members, schedules' targets, features, names other records keep…) is refused here too, every problem at once.
    await planFolder(ctx, trx, project.id, read, { secretValues: {}, prune: false, checkOnly: true });
    if (runnable.length === 0)
      throw invalid("the documents hold no automation that can run", [{ path: "body.documents", message: "no automation document (or all are disabled)" }]);
    if (runnable.length > FEATURE_RUN_MAX) throw conflict(`more than ${FEATURE_RUN_MAX} automations to run at once; test a smaller folder`);
    const envs = await store.allEnvironments(trx, project.id);
    const envId = (ref: string) => envs.find((e) => e.name === ref)?.id ?? envs.find((e) => e.id === ref)?.id;
    let environmentId: string | null = null;
    if (body.environment !== undefined) {
      environmentId = envId(body.environment) ?? null;
      if (!environmentId)
        throw invalid(`environment "${body.environment}" does not exist in this project`, [{ path: "body.environment", message: "unknown environment" }]);
    }
    const automations: RunnableAutomation[] = runnable.map((d) => {
      const b = d.body;
      let own: string | null = null;
      if (b.environment !== undefined && environmentId === null) {
        own = envId(b.environment) ?? null;
        if (!own)
          throw invalid("unknown environment", [
            problemAt(
              d.path,
              d.line(["environment"]),
              "environment",
              `environment "${b.environment}" does not exist in this project (apply it first, or pass an environment)`,
            ),
          ]);
      }
      return {
        id: newId("tst"),
        name: b.name,
        kind: b.kind,
        steps: JSON.stringify(b.steps),
        timeout_ms: b.timeout_ms ?? ctx.core.config.runner.default_timeout_ms,
        retries: b.retries ?? 0,
        environment_id: own,
        // A quarantined automation's failure is set apart in the test's group run too.
        quarantined: b.quarantined ? 1 : 0,
      };
    });
    return startGroupRun(testCtx, trx, {
      projectId: project.id,
      group: { id: null, name: body.name ?? "test" },
      automations,
      options: runOptions(environmentId, body),
    });
  });
  if (started) ctx.core.events.emit("runQueued");
  return answer;
};
