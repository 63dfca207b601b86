// The reader's thread: what members hand in to be read (applied documents: YAML or JSON, their lines, their
// schemas; a crawled page's HTML) is read here, apart from the API's thread, which a large folder or page would
// otherwise hold for the better part of a second. Started by reader-thread.ts; the compiled executable carries it
// as a second entry point (scripts/build.ts). Reading is pure: no member code runs, and nothing here opens a file.
import { readDocuments } from "./core/apply/documents";
import { outlinePage } from "./generation/crawl/page-outline";

export type ReaderRequest =
  | { id: number; kind: "documents"; documents: { path: string; text: string }[]; defaultEnvironment: string | undefined }
  | { id: number; kind: "outline"; html: string; url: string };

declare const self: Worker;

function read(request: ReaderRequest): unknown {
  if (request.kind === "outline") return outlinePage(request.html, request.url);
  const result = readDocuments(request.documents, request.defaultEnvironment);
  // The line readers stay here: their tables cross, and reader-thread.ts makes them again.
  return "parsed" in result ? { parsed: result.parsed.map(({ line: _, ...p }) => p) } : result;
}

self.onmessage = (e: MessageEvent<ReaderRequest>) => {
  try {
    postMessage({ id: e.data.id, result: read(e.data) });
  } catch (err) {
    postMessage({ id: e.data.id, failure: (err as Error).message ?? String(err) });
  }
};
