// An operation's answer as a server-sent event stream (an operation with a `stream` in the manifest, asked with
// Accept: text/event-stream): the events the handler emits as its work goes on, then `done` with the JSON answer
// or `error` in the error shape. Nothing is sent before the handler's first event, so a refusal before it is an
// ordinary JSON error with its status. A client that goes away aborts the work (the handler's signal).

/** Whether the request asks for an event stream (Accept lists text/event-stream, not with q=0). */
export function wantsEventStream(request: Request): boolean {
  const accept = request.headers.get("accept");
  if (!accept) return false;
  for (const item of accept.split(",")) {
    const [type, ...params] = item.split(";").map((p) => p.trim().toLowerCase());
    if (type !== "text/event-stream") continue;
    const q = params.find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

/** A comment line every so often: proxies and the server's idle timeout (10 s) see a live connection. */
const HEARTBEAT_MS = 5_000;

const encoder = new TextEncoder();
const frame = (event: string, data: unknown) => encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

export interface StreamedWork {
  /** The status of a stream that began (the operation's success status). */
  status: number;
  /** Aborted when the client goes away (the stream is cancelled): the handler's signal includes it. */
  abort: AbortController;
  /** Runs the operation, sending events through `emit`; resolves to the JSON answer. */
  run(emit: (event: string, data: unknown) => void): Promise<unknown>;
  /** The error body (the spec's shape) of a failure after the stream began. */
  errorBody(e: unknown): Promise<unknown>;
}

/**
 * Starts the work and answers once it has emitted its first event (or finished): a stream of its events, then
 * `done` or `error`. A failure before the first event is thrown, for the caller to answer as JSON.
 */
export async function eventStreamAnswer(work: StreamedWork): Promise<Response> {
  let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  const pending: Uint8Array[] = [];
  let closed = false;
  let began: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    began = resolve;
  });
  const push = (chunk: Uint8Array) => {
    if (closed) return;
    if (!controller) {
      pending.push(chunk);
      return;
    }
    try {
      controller.enqueue(chunk);
    } catch {
      closed = true;
    }
  };
  const done = work.run((event, data) => {
    push(frame(event, data));
    began();
  });
  // Rejects when the work fails before its first event: the caller answers that as an ordinary error.
  await Promise.race([started, done]);

  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const end = () => {
    closed = true;
    clearInterval(heartbeat);
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      for (const chunk of pending) c.enqueue(chunk);
      pending.length = 0;
      heartbeat = setInterval(() => push(encoder.encode(": keep-alive\n\n")), HEARTBEAT_MS);
      const close = () => {
        if (closed) return;
        end();
        try {
          c.close();
        } catch {
          // already closed by the client going away
        }
      };
      done.then(
        (answer) => {
          push(frame("done", answer));
          close();
        },
        async (e: unknown) => {
          push(frame("error", await work.errorBody(e)));
          close();
        },
      );
    },
    cancel() {
      end();
      work.abort.abort(new DOMException("the client went away", "AbortError"));
    },
  });
  return new Response(body, {
    status: work.status,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      // no-cache as event streams ask; no-store as every API answer is private to its caller.
      "cache-control": "no-cache, no-store",
      // A proxy in front (nginx) passes each event on at once instead of buffering the answer.
      "x-accel-buffering": "no",
    },
  });
}
