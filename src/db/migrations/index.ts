// Every migration, listed in code so that they are compiled into the executable.
import type { Migration } from "kysely/migration";
import * as init from "./0001_init";

export const migrations: Record<string, Migration> = {
  "0001_init": init,
};
