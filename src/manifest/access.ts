// Operations on API keys and workspace members.
import { z } from "zod";
import { defineOperation, ListQuery, Name, page, PathId } from "./define";
import { ApiKey, Member, Role } from "./records";

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

export const revokeKey = defineOperation({
  name: "revoke_key",
  method: "DELETE",
  path: "/keys/{keyId}",
  summary: "Revoke one of the caller's API keys; it stops working at once",
  description: "Never refused for the workspace's request budget (the per-IP limit still applies).",
  params: z.object({ keyId: PathId.describe("Key id (key_…)") }),
  response: null,
  errors: ["not_found"],
  hints: { destructive: true, idempotent: true },
  cli: { words: ["keys", "revoke"], args: ["keyId"] },
  budgetExempt: true,
});

export const listMembers = defineOperation({
  name: "list_members",
  method: "GET",
  path: "/members",
  summary: "List the workspace's members",
  query: ListQuery,
  response: page(Member, "MemberPage"),
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["members", "list"] },
});

export const addMember = defineOperation({
  name: "add_member",
  method: "POST",
  path: "/members",
  summary: "Add a user to the workspace by email (owners and admins); a new user gets a one-time password-setup link",
  body: z.strictObject({ email: z.email().max(320), name: Name.optional(), role: Role.default("member") }),
  response: Member.extend({ setup_url: z.string().nullable().describe("One-time link to set a password, for a new user") }),
  successStatus: 201,
  errors: ["forbidden", "conflict"],
  cli: { words: ["members", "add"], args: ["email"] },
});

export const updateMember = defineOperation({
  name: "update_member",
  method: "PATCH",
  path: "/members/{userId}",
  summary: "Change a member's role (owners and admins; the last owner stays an owner)",
  params: z.object({ userId: PathId.describe("User id (usr_…)") }),
  body: z.strictObject({ role: Role }),
  response: Member,
  errors: ["not_found", "forbidden", "conflict"],
  hints: { idempotent: true },
  cli: { words: ["members", "update"], args: ["userId"] },
});

export const removeMember = defineOperation({
  name: "remove_member",
  method: "DELETE",
  path: "/members/{userId}",
  summary: "Remove a member from the workspace (owners and admins); their keys stop working at once",
  description: "Never refused for the workspace's request budget (the per-IP limit still applies), so a member whose key spends the budget can still be removed.",
  params: z.object({ userId: PathId.describe("User id (usr_…)") }),
  response: null,
  errors: ["not_found", "forbidden", "conflict"],
  hints: { destructive: true, idempotent: true },
  cli: { words: ["members", "remove"], args: ["userId"] },
  budgetExempt: true,
});
