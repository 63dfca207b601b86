// First-run setup (the first workspace and its owner) and password setup from an invitation link.
import type { Db } from "../../db/database";
import { invalid } from "../../manifest/errors";
import { hashApiKey, sameDigest } from "../../security/api-keys";
import { newId } from "../../security/ids";
import { hashPassword } from "../../security/passwords";
import { conflict } from "../../manifest/errors";
import * as accessStore from "../access/store";
import { checkEmail, checkNewPassword, slugify } from "../access/users";
import { nowIso } from "../shared/time";
import { firstMembership } from "./sessions";

export async function anyUserExists(db: Db): Promise<boolean> {
  return accessStore.anyUserExists(db);
}

/** Creates the first workspace and its owner; refused once any user exists, so it can only happen once. */
export async function firstRunSetup(
  db: Db,
  input: { workspaceName: string; name: string; email: string; password: string },
): Promise<{ userId: string; workspaceId: string }> {
  const email = checkEmail(input.email);
  const passwordHash = await hashPassword(checkNewPassword(input.password));
  return db.transaction().execute(async (trx) => {
    // Inside the write transaction, so two setups racing cannot both create an owner.
    if (await anyUserExists(trx)) throw conflict("this installation is already set up; sign in instead");
    const t = nowIso();
    const workspaceId = newId("wsp");
    const userId = newId("usr");
    await accessStore.insertWorkspace(trx, { id: workspaceId, slug: slugify(input.workspaceName), name: input.workspaceName, created_at: t, updated_at: t });
    await accessStore.insertUser(trx, {
      id: userId,
      email,
      name: input.name,
      password_hash: passwordHash,
      setup_token_hash: null,
      setup_token_expires_at: null,
      created_at: t,
      updated_at: t,
    });
    await accessStore.insertMembership(trx, { workspace_id: workspaceId, user_id: userId, role: "owner", created_at: t, updated_at: t });
    return { userId, workspaceId };
  });
}

async function userOfSetupToken(db: Db, token: string) {
  if (!/^[0-9A-Za-z]{20,100}$/.test(token)) return null;
  const hash = hashApiKey(token);
  const user = await accessStore.userBySetupTokenHash(db, hash);
  if (!user?.setup_token_hash || !sameDigest(user.setup_token_hash, hash)) return null;
  if (!user.setup_token_expires_at || user.setup_token_expires_at <= nowIso()) return null;
  return user;
}

/** Who a password-setup link is for, or null when it is unknown, used or expired. */
export async function describeSetupToken(db: Db, token: string): Promise<{ email: string; name: string } | null> {
  const user = await userOfSetupToken(db, token);
  return user ? { email: user.email, name: user.name } : null;
}

/** Sets the password from a one-time link and spends the link. */
export async function completePasswordSetup(db: Db, token: string, password: string): Promise<{ userId: string; workspaceId: string }> {
  const user = await userOfSetupToken(db, token);
  if (!user) throw invalid("this password-setup link is unknown, already used or expired; ask an admin for a new one");
  const membership = await firstMembership(db, user.id);
  if (!membership) throw invalid("this account is no longer a member of any workspace");
  const passwordHash = await hashPassword(checkNewPassword(password));
  const spent = await accessStore.updateUserWithSetupToken(db, user.id, hashApiKey(token), {
    password_hash: passwordHash,
    setup_token_hash: null,
    setup_token_expires_at: null,
    updated_at: nowIso(),
  });
  if (!spent) throw invalid("this password-setup link was just used");
  return { userId: user.id, workspaceId: membership.workspaceId };
}
