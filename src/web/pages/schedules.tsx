// A project's schedules (next due times, on/off) and alert channels (a test send, recent deliveries).
import { useState } from "preact/hooks";
import { allPages, call } from "../api";
import { useAction, useLoad } from "../hooks";
import { AlertChannelKind } from "../../manifest/schedule-records";
import { Badge, Card, ConfirmButton, Empty, ErrorNote, Field, inputValue, Loading, when } from "../ui";
import { StaleNotice, useStaleGuard } from "../stale-edit";
import { ProjectFrame } from "./project-frame";
import { canAdminister, useSession } from "../session";

export function SchedulesPage({ project }: { project: string }) {
  return (
    <ProjectFrame project={project} section="schedules">
      <Schedules project={project} />
      <Channels project={project} />
    </ProjectFrame>
  );
}

type TargetKind = "automation" | "group" | "tags";
type TimingKind = "interval" | "cron";
const TARGET_LABEL: Record<TargetKind, string> = { automation: "Automation (name or id)", group: "Group (name or id)", tags: "Tags (any of, comma-separated)" };
/** The browser's own zone: the cron form's default. */
const LOCAL_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
const ZONES: string[] = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
/** How many upcoming due times each row shows (the record holds up to five). */
const SHOWN_DUE = 3;

/** What a schedule runs, by name (the record keeps ids; one not among the names loaded shows its id). */
function targetText(target: Record<string, unknown>, names: ReadonlyMap<string, string>): string {
  if (Array.isArray(target.tags)) return `tags: ${target.tags.join(", ")}`;
  if (typeof target.group === "string") return `group ${names.get(target.group) ?? target.group}`;
  if (typeof target.automation === "string") return `automation ${names.get(target.automation) ?? target.automation}`;
  return "—";
}

/** The names of the project's automations and groups, by id (the first 200 of each). */
function useTargetNames(project: string): ReadonlyMap<string, string> {
  const loaded = useLoad(
    () =>
      Promise.all([
        allPages((cursor) => call("listAutomations", { project, limit: 200, cursor })),
        allPages((cursor) => call("listGroups", { project, limit: 200, cursor })),
      ]),
    `schedule-targets:${project}`,
  );
  return new Map([...(loaded.data?.[0].data ?? []), ...(loaded.data?.[1].data ?? [])].map((r) => [r.id, r.name]));
}

const SCHEDULES_POLL_MS = 5_000;

function Schedules({ project }: { project: string }) {
  // Read again every few seconds while a schedule is on: its last fire, last error and next due times move.
  const list = useLoad(
    () => allPages((cursor) => call("listSchedules", { project, limit: 200, cursor })),
    `schedules:${project}`,
    (d) => (d.data.some((x) => x.enabled) ? SCHEDULES_POLL_MS : 0),
  );
  const names = useTargetNames(project);
  const [name, setName] = useState("");
  const [targetKind, setTargetKind] = useState<TargetKind>("automation");
  const [targetRef, setTargetRef] = useState("");
  const [timing, setTiming] = useState<TimingKind>("interval");
  const [every, setEvery] = useState("300");
  const [cron, setCron] = useState("0 6 * * 1-5");
  const [zone, setZone] = useState(LOCAL_ZONE);
  const a = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    await a.run(async () => {
      const target =
        targetKind === "tags"
          ? {
              tags: targetRef
                .split(",")
                .map((t) => t.trim())
                .filter(Boolean),
            }
          : targetKind === "group"
            ? { group: targetRef.trim() }
            : { automation: targetRef.trim() };
      const when = timing === "cron" ? { cron: cron.trim(), timezone: zone.trim() } : { interval_seconds: Number(every) };
      await call("createSchedule", { project, name, target, ...when });
      setName("");
      list.reload();
    });
  };
  const act = useAction();
  return (
    <Card title="Schedules">
      <form class="form-row" onSubmit={create} aria-label="New schedule">
        <Field label="Schedule name">
          <input required value={name} onInput={(e) => setName(inputValue(e))} placeholder="checkout every 5 minutes" />
        </Field>
        <Field label="Runs">
          <select value={targetKind} onChange={(e) => setTargetKind(inputValue(e) as TargetKind)}>
            <option value="automation">one automation</option>
            <option value="group">a group</option>
            <option value="tags">automations with tags</option>
          </select>
        </Field>
        <Field label={TARGET_LABEL[targetKind]} hint={targetKind === "tags" ? "Active automations carrying any of them, as one group run." : undefined}>
          <input
            required
            value={targetRef}
            onInput={(e) => setTargetRef(inputValue(e))}
            placeholder={targetKind === "tags" ? "smoke, api" : targetKind === "group" ? "nightly" : "checkout"}
          />
        </Field>
        <Field label="Timing">
          <select value={timing} onChange={(e) => setTiming(inputValue(e) as TimingKind)}>
            <option value="interval">every N seconds</option>
            <option value="cron">cron</option>
          </select>
        </Field>
        {timing === "interval" ? (
          <Field label="Every (seconds)" hint="At least 10.">
            <input required type="number" min={10} value={every} onInput={(e) => setEvery(inputValue(e))} />
          </Field>
        ) : (
          <>
            <Field label="Cron (5 fields)" hint="minute hour day-of-month month day-of-week">
              <input required value={cron} onInput={(e) => setCron(inputValue(e))} placeholder="30 2 * * *" spellcheck={false} />
            </Field>
            <Field label="Time zone" hint="An IANA name; daylight saving is handled as cron does.">
              <input required list="schedule-zones" value={zone} onInput={(e) => setZone(inputValue(e))} placeholder="Europe/Berlin" />
              <datalist id="schedule-zones">
                {ZONES.map((z) => (
                  <option key={z} value={z} />
                ))}
              </datalist>
            </Field>
          </>
        )}
        <button class="btn btn-primary" disabled={a.busy}>
          Create schedule
        </button>
      </form>
      <ErrorNote message={a.error} details={a.details} />
      <ErrorNote message={act.error} />
      {list.loading && <Loading />}
      <ErrorNote message={list.error} />
      {list.data?.data.length === 0 && <Empty>No schedules yet.</Empty>}
      {list.data && list.data.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Runs</th>
                <th>When</th>
                <th>Next</th>
                <th>Last</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((sch) => (
                <ScheduleRow key={sch.id} project={project} sch={sch} names={names} busy={act.busy} run={act.run} onChanged={async () => list.reload()} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}

type ScheduleRecord = Awaited<ReturnType<typeof call<"getSchedule">>>;

/** What the latest due time did: the run or group run it started, or why it was skipped or started nothing. */
function LastFire({ project, sch }: { project: string; sch: ScheduleRecord }) {
  const fire = sch.last_fire;
  if (fire === null) return sch.last_error ? <span class="muted"> — {sch.last_error}</span> : null;
  if (fire.outcome === "skipped") return <span class="muted"> — skipped: {fire.reason}</span>;
  if (fire.outcome === "failed") return <span class="muted"> — {fire.reason ?? sch.last_error}</span>;
  const p = encodeURIComponent(project);
  if (fire.run_id)
    return (
      <>
        {" "}
        — <a href={`#/p/${p}/runs/${fire.run_id}`}>its run</a>
      </>
    );
  if (fire.group_run_id)
    return (
      <>
        {" "}
        — <a href={`#/p/${p}/group-runs/${fire.group_run_id}`}>its group run</a>
      </>
    );
  return null;
}

/** One schedule's row: Pause/Resume and Delete are sent from the version shown (If-Match); a stale one says so. */
function ScheduleRow({
  project,
  sch,
  names,
  busy,
  run,
  onChanged,
}: {
  project: string;
  sch: ScheduleRecord;
  names: ReadonlyMap<string, string>;
  busy: boolean;
  run: ReturnType<typeof useAction>["run"];
  onChanged: () => Promise<void>;
}) {
  const guard = useStaleGuard(sch, () => call("getSchedule", { project, scheduleId: sch.id }));
  return (
    <>
      <tr>
        <td data-label="Name">{sch.name}</td>
        <td data-label="Runs">{targetText(sch.target, names)}</td>
        <td data-label="When">{sch.cron ? `${sch.cron} (${sch.timezone ?? "UTC"})` : `every ${sch.interval_seconds} s`}</td>
        <td data-label="Next">
          {sch.enabled && sch.next_runs_at.length > 0 ? (
            <ul class="due-list" aria-label={`Next due times of ${sch.name}`}>
              {sch.next_runs_at.slice(0, SHOWN_DUE).map((t) => (
                <li key={t}>
                  {/* Due times less than a minute apart are told apart by their seconds. */}
                  <time dateTime={t}>{when(t, sch.interval_seconds !== null && sch.interval_seconds % 60 !== 0)}</time>
                </li>
              ))}
            </ul>
          ) : (
            "off"
          )}
        </td>
        <td data-label="Last">
          <span class="whole-words">{sch.last_fired_at ? when(sch.last_fired_at) : "never"}</span>
          <LastFire project={project} sch={sch} />
        </td>
        <td data-label="Actions">
          <button
            type="button"
            class="btn"
            disabled={busy}
            onClick={() =>
              run(async () => {
                if ((await guard.save((ifMatch) => call("updateSchedule", { project, scheduleId: sch.id, enabled: !sch.enabled, if_match: ifMatch }))) !== null)
                  await onChanged();
              })
            }
          >
            {sch.enabled ? "Pause" : "Resume"}
          </button>{" "}
          <ConfirmButton
            label="Delete"
            question={`Delete the schedule "${sch.name}"?`}
            onConfirm={() =>
              run(async () => {
                if ((await guard.save((ifMatch) => call("deleteSchedule", { project, scheduleId: sch.id, if_match: ifMatch }).then(() => true))) !== null)
                  await onChanged();
              }).then(() => undefined)
            }
          />
        </td>
      </tr>
      {guard.stale && (
        <tr>
          <td colSpan={6}>
            <StaleNotice
              noun={`schedule ${sch.name}`}
              verb="change"
              before={sch}
              now={guard.stale}
              onReload={() => {
                guard.dismiss();
                void onChanged();
              }}
            />
          </td>
        </tr>
      )}
    </>
  );
}

function Channels({ project }: { project: string }) {
  const list = useLoad(() => allPages((cursor) => call("listAlertChannels", { project, limit: 200, cursor })), `alert-channels:${project}`);
  // Where alerts go is set by owners and admins; a member sees the channels, their deliveries, and sends a test.
  const manages = canAdminister(useSession().session);
  const [name, setName] = useState("");
  const [kind, setKind] = useState<string>(AlertChannelKind.options[0] ?? "webhook");
  const [url, setUrl] = useState("");
  const [secret, setSecret] = useState("");
  const [emailTo, setEmailTo] = useState("");
  const a = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    await a.run(async () => {
      const k = AlertChannelKind.parse(kind);
      await call("createAlertChannel", {
        project,
        name,
        kind: k,
        ...(k === "email" ? { email_to: emailTo.split(/[\s,]+/).filter(Boolean) } : { url }),
        ...(k === "webhook" ? { secret } : {}),
      });
      setName("");
      setSecret("");
      list.reload();
    });
  };
  return (
    <Card title="Alert channels">
      {!manages && <p class="muted">Alert channels are set by the workspace's owners and admins.</p>}
      {manages && (
        <form class="form-row" onSubmit={create} aria-label="New alert channel">
          <Field label="Channel name">
            <input required value={name} onInput={(e) => setName(inputValue(e))} placeholder="team chat" />
          </Field>
          <Field label="Kind">
            <select value={kind} onChange={(e) => setKind(inputValue(e))}>
              {AlertChannelKind.options.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
          </Field>
          {kind === "email" ? (
            <Field label="Recipients">
              <input required value={emailTo} onInput={(e) => setEmailTo(inputValue(e))} placeholder="qa@example.com" />
            </Field>
          ) : (
            <Field label="URL">
              <input required type="url" value={url} onInput={(e) => setUrl(inputValue(e))} placeholder="https://hooks.example.com/…" />
            </Field>
          )}
          {kind === "webhook" && (
            <Field label="Secret" hint="At least 8 characters; signs every body. It is never shown again.">
              <input required type="password" minLength={8} value={secret} onInput={(e) => setSecret(inputValue(e))} autoComplete="new-password" />
            </Field>
          )}
          <button class="btn btn-primary" disabled={a.busy}>
            Create channel
          </button>
        </form>
      )}
      <ErrorNote message={a.error} details={a.details} />
      {list.loading && <Loading />}
      <ErrorNote message={list.error} />
      {list.data?.data.length === 0 && <Empty>No alert channels yet.</Empty>}
      {list.data?.data.map((ch) => (
        <Channel key={ch.id} project={project} channel={ch} onDeleted={list.reload} manages={manages} />
      ))}
    </Card>
  );
}

function Channel({
  project,
  channel,
  onDeleted,
  manages,
}: {
  project: string;
  channel: { id: string; name: string; kind: string; events: string[]; updated_at: string };
  onDeleted: () => void;
  /** Whether the person may change and delete it (an owner or admin). */
  manages: boolean;
}) {
  const guard = useStaleGuard(channel, () => call("getAlertChannel", { project, channelId: channel.id }));
  const deliveries = useLoad(
    () => call("listAlertDeliveries", { project, channelId: channel.id, limit: 5 }),
    `deliveries:${project}:${channel.id}`,
    (d) => (d.data.some((x) => x.status === "pending") ? 1500 : 0),
  );
  const a = useAction();
  return (
    <section class="stack" aria-label={`Alert channel ${channel.name}`}>
      <h3>
        {channel.name}{" "}
        <span class="muted">
          ({channel.kind}: {channel.events.join(", ")})
        </span>
      </h3>
      <div class="form-row">
        <button
          type="button"
          class="btn"
          disabled={a.busy}
          onClick={() =>
            a.run(async () => {
              await call("testAlertChannel", { project, channelId: channel.id });
              deliveries.reload();
            })
          }
        >
          Send a test
        </button>
        {manages && (
          <ConfirmButton
            label="Delete"
            question={`Delete the alert channel "${channel.name}" and its deliveries?`}
            onConfirm={() =>
              a
                .run(async () => {
                  if (
                    (await guard.save((ifMatch) => call("deleteAlertChannel", { project, channelId: channel.id, if_match: ifMatch }).then(() => true))) !== null
                  )
                    onDeleted();
                })
                .then(() => undefined)
            }
          />
        )}
      </div>
      {guard.stale && (
        <StaleNotice
          noun={`alert channel ${channel.name}`}
          verb="delete"
          before={channel}
          now={guard.stale}
          onReload={() => {
            guard.dismiss();
            onDeleted();
          }}
        />
      )}
      <ErrorNote message={a.error} />
      {deliveries.data?.data.length === 0 && <p class="muted">Nothing sent yet.</p>}
      {deliveries.data && deliveries.data.data.length > 0 && (
        <ul>
          {deliveries.data.data.map((d) => (
            <li key={d.delivery_id}>
              {/* The delivery's own words: delivered, pending (still to be tried, or tried again), failed (given up). */}
              <Badge status={d.status} /> {d.event} · {when(d.created_at)} · {d.attempts} attempt{d.attempts === 1 ? "" : "s"}
              {d.status === "pending" && d.next_attempt_at && d.attempts > 0 && <> · next attempt {when(d.next_attempt_at)}</>}
              {d.error && <span class="muted"> — {d.error}</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
