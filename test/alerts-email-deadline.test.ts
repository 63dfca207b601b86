// One email attempt takes at most alerts.timeout_ms as a whole: an SMTP server that answers every command just
// within the per-stage timeouts held an attempt for many times the limit — past its lease, when another node may
// take the delivery and send it again.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import { json } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { waitUntilAsync } from "./helpers/wait";

const TIMEOUT_MS = 1000;
/** Every answer comes this long after the line it answers (and the greeting this long after the connection). */
const ANSWER_AFTER_MS = 700;

let s: TestServer;
let smtp: Server;
const sockets = new Set<Socket>();

/** A slow but working SMTP server: 220, 250 to each command, 354 to DATA, 250 at the end of the message, 221 to QUIT. */
function slowSmtp(): Server {
  return createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    const say = (line: string) =>
      setTimeout(() => {
        if (!socket.destroyed) socket.write(`${line}\r\n`);
      }, ANSWER_AFTER_MS);
    say("220 slow.test ESMTP");
    let inData = false;
    let buffer = "";
    socket.on("data", (chunk) => {
      buffer += chunk.toString("utf8");
      for (let i = buffer.indexOf("\r\n"); i >= 0; i = buffer.indexOf("\r\n")) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        if (inData) {
          if (line === ".") {
            inData = false;
            say("250 queued");
          }
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === "DATA") {
          inData = true;
          say("354 go on");
        } else if (verb === "QUIT") say("221 bye");
        else if (verb === "EHLO") say("250 slow.test");
        else say("250 ok");
      }
    });
  });
}

beforeAll(async () => {
  smtp = slowSmtp();
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
  const port = (smtp.address() as { port: number }).port;
  s = await startTestServer({
    rate_limit: { enabled: false },
    alerts: { timeout_ms: TIMEOUT_MS, retry_first_ms: 60_000, smtp: { host: "127.0.0.1", port, from: "svc <svc@acme.test>" } },
  });
  await json(await s.call("POST", "/projects", { name: "mail" }), 201);
}, 60_000);
afterAll(async () => {
  await s.stop();
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

test("an email attempt to an SMTP server slower than alerts.timeout_ms in all ends at the limit, as a failed attempt saying so", async () => {
  const channel = await json<{ id: string }>(
    await s.call("POST", "/projects/mail/alert-channels", { name: "slow mail", kind: "email", email_to: ["qa@acme.test"] }),
    201,
  );
  const t0 = Date.now();
  const { delivery_id } = await json<{ delivery_id: string }>(await s.call("POST", `/projects/mail/alert-channels/${channel.id}/test`), 202);
  type Delivery = { delivery_id: string; attempts: number; status: string; error: string | null };
  const attempt = async () =>
    (await json<{ data: Delivery[] }>(await s.call("GET", `/projects/mail/alert-channels/${channel.id}/deliveries`))).data.find(
      (d) => d.delivery_id === delivery_id,
    );
  expect(await waitUntilAsync(async () => ((await attempt())?.attempts ?? 0) >= 1, 15_000)).toBe(true);
  const ended = Date.now() - t0;
  // Seven exchanges at 0.7 s each took ~5 s; the attempt now ends at its 1 s limit (with room for a busy machine).
  expect(ended).toBeLessThan(3_000);
  expect(await attempt()).toMatchObject({ attempts: 1, status: "pending", error: `SMTP: no answer within ${TIMEOUT_MS} ms` });
}, 30_000);
