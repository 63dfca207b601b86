// Every migration, listed in code so that they are compiled into the executable.
import type { Migration } from "kysely/migration";
import * as init from "./0001_init";
import * as runPosition from "./0002_run_position";
import * as urlExpectations from "./0003_url_expectations";
import * as secretsProtected from "./0004_secrets_protected";
import * as invitations from "./0005_invitations";
import * as cockpit from "./0010_cockpit";

export const migrations: Record<string, Migration> = {
  "0001_init": init,
  "0002_run_position": runPosition,
  "0003_url_expectations": urlExpectations,
  "0004_secrets_protected": secretsProtected,
  "0005_invitations": invitations,
  "0010_cockpit": cockpit,
};
