// Storage failures in the core's words ("busy", "disk_full", "constraint"), as the open store's dialect names them.
import { storageErrorKind as dialectErrorKind } from "../db/database";
import type { StorageErrorKind } from "./storage";

export function storageErrorKind(e: unknown): StorageErrorKind | null {
  return dialectErrorKind(e);
}
