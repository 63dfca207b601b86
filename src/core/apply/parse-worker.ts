// The parser's own thread: reads applied documents (YAML or JSON, their lines, their schemas) apart from the API's
// thread, which a large folder would otherwise hold for the better part of a second. Started by parse.ts; the
// compiled executable carries it as a second entry point (scripts/build.ts).
import { readDocuments } from "./documents";

export interface ParseRequest {
  id: number;
  documents: { path: string; text: string }[];
  defaultEnvironment: string | undefined;
}

declare const self: Worker;

self.onmessage = (e: MessageEvent<ParseRequest>) => {
  const { id, documents, defaultEnvironment } = e.data;
  try {
    const result = readDocuments(documents, defaultEnvironment);
    // The line readers stay here: their tables cross, and parse.ts makes them again.
    const plain = "parsed" in result ? { parsed: result.parsed.map(({ line: _, ...p }) => p) } : result;
    postMessage({ id, result: plain });
  } catch (err) {
    postMessage({ id, failure: (err as Error).message ?? String(err) });
  }
};
