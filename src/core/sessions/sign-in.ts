// Checking an email and password; the same work is done for unknown emails so timing does not reveal accounts.
import type { Db } from "../../db/database";
import { hashPassword, verifyPassword } from "../../security/passwords";
import { findUserByEmail } from "../access/users";
import { firstMembership } from "./sessions";

let decoyHash: Promise<string> | null = null;

/** The user and workspace for a correct email and password, or null. */
export async function checkPassword(db: Db, email: string, password: string): Promise<{ userId: string; workspaceId: string } | null> {
  const user = await findUserByEmail(db, email);
  if (!user?.password_hash) {
    decoyHash ??= hashPassword("decoy password for unknown accounts");
    await verifyPassword(password, await decoyHash);
    return null;
  }
  if (!(await verifyPassword(password, user.password_hash))) return null;
  const membership = await firstMembership(db, user.id);
  return membership ? { userId: user.id, workspaceId: membership.workspaceId } : null;
}
