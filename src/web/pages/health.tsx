// What a project's history shows: the trend of pass rate and duration, and the automations failing or flaky now.
import { allPages, call, enc } from "../api";
import { useLoad } from "../hooks";
import { TrendChart } from "../charts";
import { Badge, Card, ErrorNote, Loading } from "../ui";

export function ProjectHealth({ project }: { project: string }) {
  const h = useLoad(
    async () => ({
      history: await call("getProjectHistory", { project, days: 30 }),
      automations: (await allPages((cursor) => call("listAutomations", { project, limit: 200, cursor }))).data.filter((a) => a.status !== "disabled"),
    }),
    `health:${project}`,
  );
  const bad = (h.data?.automations ?? [])
    .filter((a) => a.health.state === "failing" || a.health.state === "flaky")
    .sort((a, b) => (a.health.state === b.health.state ? a.name.localeCompare(b.name) : a.health.state === "failing" ? -1 : 1));
  return (
    <>
      <Card title="Trend (30 days)">
        {h.loading && <Loading />}
        <ErrorNote message={h.error} />
        {h.data && <TrendChart days={h.data.history.daily} totals={h.data.history} />}
      </Card>
      <Card title="Failing or flaky now">
        {h.data && bad.length === 0 && <p class="muted">None: every automation that ran passed its latest run steadily.</p>}
        {bad.length > 0 && (
          <ul class="health-list" data-testid="failing-now">
            {bad.map((a) => (
              <li key={a.id}>
                {/* What its latest run came to (error and timed out are not failed assertions), or flaky. */}
                <Badge status={a.health.state === "flaky" ? "flaky" : (a.health.last_status ?? "failed")} />
                <a href={`#/p/${enc(project)}/automations/${a.id}`}>{a.name}</a>
                <span class="muted">
                  {a.health.pass_rate === null
                    ? ""
                    : `${Math.round(a.health.pass_rate * 100)}% of the last ${a.health.runs === 1 ? "run" : `${a.health.runs} runs`} passed`}
                  {a.quarantined ? " · quarantined" : ""}
                </span>
              </li>
            ))}
          </ul>
        )}
      </Card>
    </>
  );
}
