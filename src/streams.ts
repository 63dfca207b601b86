// Reading a byte stream to its end without holding more than a limit: the shared guard for request bodies
// (HTTP API) and response bodies (http steps of the run engine).

/** The whole stream, or null as soon as it passes `maxBytes` (the rest is cancelled, never buffered). */
export async function readAtMost(stream: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Uint8Array | null> {
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}
