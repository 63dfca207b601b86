// Every migration, listed in code so that they are compiled into the executable.
import type { Migration } from "kysely/migration";
import * as init from "./0001_init";
import * as runPosition from "./0002_run_position";
import * as urlExpectations from "./0003_url_expectations";
import * as secretsProtected from "./0004_secrets_protected";
import * as invitations from "./0005_invitations";
import * as fairDispatch from "./0006_fair_dispatch";
import * as runners from "./0007_runners";
import * as schedulesAlerts from "./0008_schedules_alerts";
import * as history from "./0009_history";
import * as cockpit from "./0010_cockpit";
import * as testsAsCode from "./0011_tests_as_code";
import * as assistant from "./0012_assistant";
import * as testRuns from "./0014_test_runs";
import * as sharedLimits from "./0015_shared_limits";
import * as artifactsInDb from "./0016_artifacts_in_db";
import * as startedBy from "./0017_started_by";
import * as leanRunIndexes from "./0018_lean_run_indexes";
import * as runnerInstance from "./0019_runner_instance";
import * as artifactsInS3 from "./0020_artifacts_in_s3";
import * as scheduleFireSkipped from "./0021_schedule_fire_skipped";

export const migrations: Record<string, Migration> = {
  "0001_init": init,
  "0002_run_position": runPosition,
  "0003_url_expectations": urlExpectations,
  "0004_secrets_protected": secretsProtected,
  "0005_invitations": invitations,
  "0006_fair_dispatch": fairDispatch,
  "0007_runners": runners,
  "0008_schedules_alerts": schedulesAlerts,
  "0009_history": history,
  "0010_cockpit": cockpit,
  "0011_tests_as_code": testsAsCode,
  "0012_assistant": assistant,
  "0014_test_runs": testRuns,
  "0015_shared_limits": sharedLimits,
  "0016_artifacts_in_db": artifactsInDb,
  "0017_started_by": startedBy,
  "0018_lean_run_indexes": leanRunIndexes,
  "0019_runner_instance": runnerInstance,
  "0020_artifacts_in_s3": artifactsInS3,
  "0021_schedule_fire_skipped": scheduleFireSkipped,
};
