// A folder of documents for svc apply, svc test and svc pull tests: files by path (subfolders made as needed).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempDir } from "./server";

/** Writes `files` (path → text) into `dir` (a fresh temporary folder by default) and answers the folder. */
export function writeFolder(files: Record<string, string>, dir = tempDir("svc-folder-")): string {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}
