// Reads a server-sent event stream (an operation answered with Accept: text/event-stream): one event at a time,
// its name and its data lines joined; comment lines (keep-alives) and events without data are skipped.

export interface StreamEvent {
  event: string;
  data: string;
}

export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let name = "message";
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl).replace(/\r$/, "");
        buffer = buffer.slice(nl + 1);
        if (line === "") {
          if (data.length > 0) yield { event: name, data: data.join("\n") };
          name = "message";
          data = [];
        } else if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      }
      if (done) return;
    }
  } finally {
    // Stopped early (a `done` or `error` read, or the caller gone): the connection is let go.
    reader.cancel().catch(() => {});
  }
}
