// Operations on the caller's identity, API keys, workspace members and invitations.
import { z } from "zod";
import { defineOperation, Email, ListQuery, Name, page, PathId } from "./define";
import { ApiKey, Invitation, Me, Member, Role, WorkspaceInvitation, WorkspaceRole } from "./records";

export const whoami = defineOperation({
  name: "whoami",
  method: "GET",
  path: "/me",
  summary: "Show the user, workspace and key the request acts as",
  response: Me,
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["whoami"], summary: "Show the user, workspace and key in use, and where the key and server come from", showsSettings: true },
});

export const listKeys = defineOperation({
  name: "list_keys",
  method: "GET",
  path: "/keys",
  summary: "List the caller's own API keys in this workspace",
  query: ListQuery,
  response: page(ApiKey, "ApiKeyPage"),
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["keys", "list"] },
});

const CreatedApiKey = ApiKey.pick({ id: true, name: true, prefix: true, created_at: true, expires_at: true })
  .extend({ key: z.string().describe("The key itself (svc_…), shown this once and never again") })
  .meta({ id: "CreatedApiKey" });

export const createKey = defineOperation({
  name: "create_key",
  method: "POST",
  path: "/keys",
  summary: "Create an API key for the signed-in user in this workspace; the key is shown once",
  description:
    "Only a person signed in to the web application (session cookie and X-CSRF-Token header) creates keys; a request with an API key is refused (403), so a key cannot mint keys.",
  body: z.strictObject({
    name: Name,
    expires_at: z.iso.datetime({ offset: true }).nullable().optional().describe("When the key stops working; none when omitted"),
  }),
  response: CreatedApiKey,
  successStatus: 201,
  // not_found: the signed-in person's membership ended while the session lasted.
  errors: ["forbidden", "not_found"],
  cli: { words: ["keys", "create"] },
  sessionOnly: true,
});

export const getKey = defineOperation({
  name: "get_key",
  method: "GET",
  path: "/keys/{keyId}",
  summary: "Get one of the caller's API keys (never the key itself); the answer carries its ETag",
  params: z.object({ keyId: PathId.describe("Key id (key_…)") }),
  response: ApiKey,
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["keys", "get"], args: ["keyId"] },
  versioned: true,
});

export const revokeKey = defineOperation({
  name: "revoke_key",
  method: "DELETE",
  path: "/keys/{keyId}",
  summary: "Revoke one of the caller's API keys; it stops working at once",
  description: "Never refused for the workspace's request budget (the per-IP limit still applies).",
  params: z.object({ keyId: PathId.describe("Key id (key_…)") }),
  response: null,
  errors: ["not_found", "precondition_failed"],
  hints: { destructive: true, idempotent: true },
  cli: { words: ["keys", "revoke"], args: ["keyId"] },
  budgetExempt: true,
  versioned: true,
});

export const listMembers = defineOperation({
  name: "list_members",
  method: "GET",
  path: "/members",
  summary: "List the workspace's members",
  query: ListQuery,
  response: page(Member, "MemberPage"),
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["members", "list"] },
});

export const getMember = defineOperation({
  name: "get_member",
  method: "GET",
  path: "/members/{userId}",
  summary: "Get one member of the workspace; the answer carries its ETag",
  params: z.object({ userId: PathId.describe("User id (usr_…)") }),
  response: Member,
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["members", "get"], args: ["userId"] },
  versioned: true,
});

export const addMember = defineOperation({
  name: "add_member",
  method: "POST",
  path: "/members",
  summary:
    "Add a person to the workspace by email (owners and admins): a new address gets an account and a one-time password-setup link; an address that already has an account gets an invitation they accept once signed in",
  description:
    "Answers the same fields for every address. For an address that already has an account, nothing about that account is shown or changed: " +
    'user_id and setup_url are null, status is "invited", and the person joins only by accepting the invitation (accept_invitation).',
  body: z.strictObject({
    email: Email.describe("The person's email address"),
    name: Name.optional().describe("Their name (default: the address's local part)"),
    role: Role.default("member").describe("owner, admin or member (default)"),
  }),
  response: Member.extend({
    user_id: z.string().nullable().describe("The new member's id; null while an invitation is pending"),
    name: z.string().describe("The name as given (else the address's local part)"),
    status: z.enum(["member", "invited"]).describe("member: added now (a new account); invited: the person already has an account and joins by accepting"),
    invitation_id: z.string().nullable().describe("The pending invitation (inv_…), when status is invited"),
    setup_url: z.string().nullable().describe("One-time link to set a password, for a new account only"),
  }).meta({ id: "AddedMember" }),
  successStatus: 201,
  errors: ["forbidden", "conflict", "not_found"],
  cli: { words: ["members", "add"], args: ["email"] },
});

export const updateMember = defineOperation({
  name: "update_member",
  method: "PATCH",
  path: "/members/{userId}",
  summary: "Change a member's role (owners and admins; the last owner stays an owner)",
  params: z.object({ userId: PathId.describe("User id (usr_…)") }),
  body: z.strictObject({ role: Role.describe("The member's new role: owner, admin or member") }),
  response: Member,
  errors: ["not_found", "forbidden", "conflict", "precondition_failed"],
  hints: { idempotent: true, destructive: true },
  cli: { words: ["members", "update"], args: ["userId"] },
  versioned: true,
});

export const removeMember = defineOperation({
  name: "remove_member",
  method: "DELETE",
  path: "/members/{userId}",
  summary: "Remove a member from the workspace (owners and admins); their keys stop working at once",
  description:
    "Never refused for the workspace's request budget (the per-IP limit still applies), so a member whose key spends the budget can still be removed.",
  params: z.object({ userId: PathId.describe("User id (usr_…)") }),
  response: null,
  errors: ["not_found", "forbidden", "conflict", "precondition_failed"],
  hints: { destructive: true, idempotent: true },
  cli: { words: ["members", "remove"], args: ["userId"] },
  budgetExempt: true,
  versioned: true,
});

// The workspace's side of invitations: they sit under /members, as the members-to-be of the caller's workspace
// (owners and admins), while /invitations is the invited person's own, across workspaces.
export const listWorkspaceInvitations = defineOperation({
  name: "list_workspace_invitations",
  method: "GET",
  path: "/members/invitations",
  summary: "List the invitations this workspace has sent that are still pending (owners and admins)",
  description: "An invitation leaves this list once the person accepts or declines it, or it is cancelled (cancel_invitation).",
  query: ListQuery,
  response: page(WorkspaceInvitation, "WorkspaceInvitationPage"),
  errors: ["forbidden"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["members", "invitations"] },
});

export const getWorkspaceInvitation = defineOperation({
  name: "get_workspace_invitation",
  method: "GET",
  path: "/members/invitations/{invitationId}",
  summary: "Get one pending invitation this workspace has sent (owners and admins); the answer carries its ETag",
  params: z.object({ invitationId: PathId.describe("Invitation id (inv_…)") }),
  response: WorkspaceInvitation,
  errors: ["not_found", "forbidden"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["members", "invitation"], args: ["invitationId"] },
  versioned: true,
});

export const cancelInvitation = defineOperation({
  name: "cancel_invitation",
  method: "DELETE",
  path: "/members/invitations/{invitationId}",
  summary:
    "Cancel a pending invitation this workspace has sent (owners and admins; an invitation to the owner role, owners only); it can no longer be accepted",
  description: "An invitation that was accepted, declined or cancelled no longer exists: 404, as for another workspace's invitation.",
  params: z.object({ invitationId: PathId.describe("Invitation id (inv_…)") }),
  response: null,
  errors: ["not_found", "forbidden", "precondition_failed"],
  hints: { destructive: true, idempotent: true },
  cli: { words: ["members", "cancel-invitation"], args: ["invitationId"] },
  versioned: true,
});

export const listInvitations = defineOperation({
  name: "list_invitations",
  method: "GET",
  path: "/invitations",
  summary: "List the caller's own pending invitations to other workspaces",
  query: ListQuery,
  response: page(Invitation, "InvitationPage"),
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["invitations", "list"] },
});

export const acceptInvitation = defineOperation({
  name: "accept_invitation",
  method: "POST",
  path: "/invitations/{invitationId}/accept",
  summary: "Accept one of the caller's invitations: the caller becomes a member of that workspace with the invited role",
  params: z.object({ invitationId: PathId.describe("Invitation id (inv_…)") }),
  response: WorkspaceRole,
  errors: ["not_found"],
  cli: { words: ["invitations", "accept"], args: ["invitationId"] },
});

export const declineInvitation = defineOperation({
  name: "decline_invitation",
  method: "DELETE",
  path: "/invitations/{invitationId}",
  summary: "Decline one of the caller's invitations; it is deleted",
  params: z.object({ invitationId: PathId.describe("Invitation id (inv_…)") }),
  response: null,
  errors: ["not_found"],
  hints: { destructive: true, idempotent: true },
  cli: { words: ["invitations", "decline"], args: ["invitationId"] },
});
