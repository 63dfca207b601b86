// Sending one alert delivery: a signed webhook, a Slack incoming webhook, or an email over SMTP. Nothing here
// logs or answers a channel's secret.
import { createHmac } from "node:crypto";
import nodemailer from "nodemailer";
import type { Config } from "../../config/schema";
import type { AttemptResult, DueDelivery } from "../core/alerts/outbox";

/** `sha256=<hex HMAC-SHA256 of the raw body>` with the channel's secret. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`;
}

interface AlertBody {
  event: string;
  project?: { name?: string; slug?: string };
  automation?: { name: string };
  group?: { name: string };
  schedule?: { name: string };
  channel?: { name: string };
  environment?: { name: string | null } | null;
  run?: { status: string; url: string; runner?: { id: string; name: string | null } | null } | null;
  error?: string;
}

const HEADLINES: Record<string, string> = {
  failing: "is failing",
  recovered: "recovered",
  flaky: "passed only after a retry (flaky)",
  schedule_failed: "could not start its runs",
  test: "test alert",
};

/**
 * Text for Slack, where `<…>` is markup — `<!channel>` pings everyone, `<https://…|label>` is a link showing only its
 * label — and `&` starts an entity: the three are escaped as Slack asks (&amp; &lt; &gt;), so names and messages
 * members wrote show as written and can neither ping nor disguise a link.
 */
export function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * One line for people (Slack, email subject). `text` is applied to every piece of the body, the names and error
 * texts members control and the run page's URL svc built alike (Slack reads `&amp;` in a bare URL as `&`).
 */
export function headline(raw: string, text: (s: string) => string = (s) => s): string {
  const b = JSON.parse(raw) as AlertBody;
  const what = b.automation
    ? `automation "${text(b.automation.name)}"`
    : b.group
      ? `group "${text(b.group.name)}"`
      : b.schedule
        ? `schedule "${text(b.schedule.name)}"`
        : `channel "${text(b.channel?.name ?? "")}"`;
  const env = b.environment?.name ? ` in ${text(b.environment.name)}` : "";
  const project = text(b.project?.name ?? b.project?.slug ?? "");
  const on = b.run?.runner ? ` on runner ${text(b.run.runner.name ?? b.run.runner.id)}` : "";
  const run = b.run ? ` — run ${text(b.run.status)}${on}: ${text(b.run.url)}` : "";
  const error = b.error ? ` — ${text(b.error)}` : "";
  return `[svc ${project}] ${what}${env} ${text(HEADLINES[b.event] ?? b.event)}${run}${error}`;
}

async function post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<AttemptResult> {
  try {
    const res = await fetch(url, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    if (res.status >= 200 && res.status < 300) return { ok: true, statusCode: res.status, error: null };
    return { ok: false, statusCode: res.status, error: `the receiver answered HTTP ${res.status}` };
  } catch (e) {
    const err = e as Error;
    return {
      ok: false,
      statusCode: null,
      error: err.name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : `could not reach the receiver: ${err.message}`,
    };
  }
}

export async function sendDelivery(config: Config, d: DueDelivery): Promise<AttemptResult> {
  const timeoutMs = config.alerts.timeout_ms;
  const { channel } = d;
  if (channel.kind === "webhook") {
    if (!channel.url) return { ok: false, statusCode: null, error: "the channel has no url" };
    if (channel.secret === null) return { ok: false, statusCode: null, error: "the channel's secret cannot be opened with this server's secrets key" };
    return post(
      channel.url,
      {
        "content-type": "application/json",
        "user-agent": "svc-alerts",
        "x-svc-event": d.event,
        "x-svc-delivery": d.id,
        "x-svc-signature-256": signature(channel.secret, d.body),
      },
      d.body,
      timeoutMs,
    );
  }
  if (channel.kind === "slack") {
    if (channel.urlUnreadable)
      return {
        ok: false,
        statusCode: null,
        error: "the channel's Slack webhook url cannot be opened with this server's secrets key: give the channel its url again",
      };
    if (!channel.url) return { ok: false, statusCode: null, error: "the channel has no url" };
    return post(
      channel.url,
      { "content-type": "application/json", "user-agent": "svc-alerts" },
      JSON.stringify({ text: headline(d.body, slackEscape) }),
      timeoutMs,
    );
  }
  const smtp = config.alerts.smtp;
  if (!smtp.host) return { ok: false, statusCode: null, error: "no SMTP server is configured ([alerts.smtp] host)" };
  const transport = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    auth: smtp.user ? { user: smtp.user, pass: smtp.password ?? "" } : undefined,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  // The timeouts above bound each stage; the attempt as a whole is bounded too (a server that answers every
  // command just in time would otherwise hold it past its lease, and another node would send it again).
  let deadline: ReturnType<typeof setTimeout> | undefined;
  try {
    const subject = headline(d.body);
    const sent = transport.sendMail({
      from: smtp.from,
      to: channel.emailTo,
      subject: subject.length > 200 ? `${subject.slice(0, 199)}…` : subject,
      text: `${subject}\n\n${JSON.stringify(JSON.parse(d.body), null, 2)}\n`,
      headers: { "X-Svc-Event": d.event, "X-Svc-Delivery": d.id },
    });
    const late = new Promise<"late">((resolve) => {
      deadline = setTimeout(() => resolve("late"), timeoutMs);
    });
    if ((await Promise.race([sent, late])) === "late") {
      sent.catch(() => undefined);
      return { ok: false, statusCode: null, error: `SMTP: no answer within ${timeoutMs} ms` };
    }
    return { ok: true, statusCode: null, error: null };
  } catch (e) {
    return { ok: false, statusCode: null, error: `SMTP: ${(e as Error).message}` };
  } finally {
    clearTimeout(deadline);
    transport.close();
  }
}
