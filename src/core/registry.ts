// Every manifest operation bound to its core handler. The type makes a missing handler a compile error.
import type { Ops } from "../manifest";
import type { Operation } from "../manifest/define";
import * as invitations from "./access/invitations";
import * as access from "./access/operations";
import * as apply from "./apply/operations";
import * as applyTest from "./apply/test-documents";
import * as assistant from "./assistant/operations";
import * as alerts from "./alerts/operations";
import * as automations from "./automations/operations";
import type { OpContext } from "./context";
import * as environments from "./environments/operations";
import * as bulk from "./features/bulk";
import * as features from "./features/operations";
import * as generations from "./generations/operations";
import * as groups from "./groups/operations";
import * as exports from "./exports/operations";
import * as imports from "./imports/operations";
import * as history from "./history/operations";
import * as dashboard from "./history/dashboard";
import type { Handler, OpInput } from "./handler";
import * as projects from "./projects/operations";
import * as runners from "./runners/operations";
import * as runs from "./runs/operations";
import * as groupRunCancel from "./runs/cancel-group-run";
import * as schedules from "./schedules/operations";
import * as selection from "./runs/selection";

/** The manifest's keys that name an operation (as in `ops.createProject`). */
export type OperationKey = { [K in keyof Ops]: Ops[K] extends Operation ? K : never }[keyof Ops];

const handlers: { [K in OperationKey]: Handler<Ops[K]> } = {
  whoami: access.whoami,
  sendAssistantMessage: assistant.sendAssistantMessage,
  confirmAssistantAction: assistant.confirmAssistantAction,
  listAssistantConversations: assistant.listAssistantConversations,
  getAssistantConversation: assistant.getAssistantConversation,
  listKeys: access.listKeys,
  createKey: access.createKey,
  getKey: access.getKey,
  revokeKey: access.revokeKey,
  listMembers: access.listMembers,
  getMember: access.getMember,
  addMember: access.addMember,
  updateMember: access.updateMember,
  removeMember: access.removeMember,
  listInvitations: invitations.listInvitations,
  acceptInvitation: invitations.acceptInvitation,
  declineInvitation: invitations.declineInvitation,
  listWorkspaceInvitations: invitations.listWorkspaceInvitations,
  getWorkspaceInvitation: invitations.getWorkspaceInvitation,
  cancelInvitation: invitations.cancelInvitation,
  listProjects: projects.listProjects,
  createProject: projects.createProject,
  getProject: projects.getProject,
  updateProject: projects.updateProject,
  deleteProject: projects.deleteProject,
  listEnvironments: environments.listEnvironments,
  createEnvironment: environments.createEnvironment,
  getEnvironment: environments.getEnvironment,
  updateEnvironment: environments.updateEnvironment,
  deleteEnvironment: environments.deleteEnvironment,
  listFeatures: features.listFeatures,
  createFeature: features.createFeature,
  getFeature: features.getFeature,
  updateFeature: features.updateFeature,
  deleteFeature: features.deleteFeature,
  startGeneration: generations.startGeneration,
  getGeneration: generations.getGeneration,
  cancelGeneration: generations.cancelGeneration,
  activateFeatureDrafts: bulk.activateFeatureDrafts,
  runFeature: bulk.runFeature,
  listAutomations: automations.listAutomations,
  createAutomation: automations.createAutomation,
  getAutomation: automations.getAutomation,
  updateAutomation: automations.updateAutomation,
  deleteAutomation: automations.deleteAutomation,
  runAutomation: automations.runAutomation,
  listAutomationRuns: automations.listAutomationRuns,
  listRuns: runs.listRuns,
  getRun: runs.getRun,
  cancelRun: runs.cancelRun,
  getRunJunit: runs.getRunJunit,
  getRunArtifact: runs.getRunArtifact,
  listGroups: groups.listGroups,
  createGroup: groups.createGroup,
  getGroup: groups.getGroup,
  updateGroup: groups.updateGroup,
  deleteGroup: groups.deleteGroup,
  runGroup: groups.runGroup,
  listGroupRuns: runs.listGroupRuns,
  getGroupRun: runs.getGroupRun,
  cancelGroupRun: groupRunCancel.cancelGroupRun,
  getGroupRunJunit: runs.getGroupRunJunit,
  listRunners: runners.listRunners,
  createRunner: runners.createRunner,
  getRunner: runners.getRunner,
  revokeRunner: runners.revokeRunner,
  applyDocuments: apply.applyDocuments,
  testDocuments: applyTest.testDocuments,
  exportHurl: exports.exportHurl,
  exportPlaywright: exports.exportPlaywright,
  importCurl: imports.importCurl,
  importPostman: imports.importPostman,
  importHar: imports.importHar,
  importOpenapi: imports.importOpenapi,
  listSchedules: schedules.listSchedules,
  createSchedule: schedules.createSchedule,
  getSchedule: schedules.getSchedule,
  updateSchedule: schedules.updateSchedule,
  deleteSchedule: schedules.deleteSchedule,
  listAlertChannels: alerts.listAlertChannels,
  createAlertChannel: alerts.createAlertChannel,
  getAlertChannel: alerts.getAlertChannel,
  updateAlertChannel: alerts.updateAlertChannel,
  deleteAlertChannel: alerts.deleteAlertChannel,
  testAlertChannel: alerts.testAlertChannel,
  listAlertDeliveries: alerts.listAlertDeliveries,
  getAutomationHistory: history.getAutomationHistory,
  getProjectHistory: history.getProjectHistory,
  getDashboard: dashboard.getDashboard,
  runSelection: selection.runSelection,
};

export type UntypedHandler = (ctx: OpContext, input: OpInput) => Promise<unknown>;

/** Handlers by operation name (snake_case, as in the manifest). */
export function handlerMap(ops: Ops): Map<string, UntypedHandler> {
  const map = new Map<string, UntypedHandler>();
  for (const [key, handler] of Object.entries(handlers)) {
    const op = (ops as Record<string, Operation>)[key];
    if (!op) throw new Error(`no operation ${key} in the manifest`);
    map.set(op.name, handler as UntypedHandler);
  }
  return map;
}
