// Sign-in attempts are limited per client address, and per account *from each address*: guesses from one
// address cannot lock the account for its owner elsewhere. Across all addresses an account's attempts are only
// slowed down once its budget is spent, never refused, so the right password from a new address still works.
// The budgets are shared by every node on PostgreSQL: guesses spread over the nodes count together.
import { type RequestBudget, requestBudget, type SharedBucketStore } from "../../security/token-bucket";

export const LOGIN_ATTEMPTS_PER_IP_PER_HOUR = 60;
export const LOGIN_ATTEMPTS_PER_ACCOUNT_AND_IP_PER_HOUR = 10;
/** Attempts on one account from all addresses together before each further attempt is slowed down. */
export const LOGIN_ATTEMPTS_PER_ACCOUNT_PER_HOUR = 10;
export const LOGIN_SLOW_DOWN_MS = 2_000;

export type LoginVerdict = { refuseForSeconds: number } | { delayMs: number };

export class LoginLimiter {
  private readonly perIp: RequestBudget;
  private readonly perAccountAndIp: RequestBudget;
  private readonly perAccount: RequestBudget;

  /** `shared`: the buckets every node takes from (PostgreSQL); absent, this process's memory. */
  constructor(shared?: SharedBucketStore) {
    this.perIp = requestBudget("login-ip", LOGIN_ATTEMPTS_PER_IP_PER_HOUR, shared);
    this.perAccountAndIp = requestBudget("login-account-ip", LOGIN_ATTEMPTS_PER_ACCOUNT_AND_IP_PER_HOUR, shared);
    this.perAccount = requestBudget("login-account", LOGIN_ATTEMPTS_PER_ACCOUNT_PER_HOUR, shared);
  }

  /** Refused (with the seconds to wait), or allowed after a delay (0 while the account's budget lasts). */
  async attempt(ip: string, email: string): Promise<LoginVerdict> {
    const byIp = await this.perIp.take(ip);
    if (!byIp.allowed) return { refuseForSeconds: byIp.retryAfterSeconds };
    const account = email.trim().toLowerCase();
    const byPair = await this.perAccountAndIp.take(`${account}\u0000${ip}`);
    if (!byPair.allowed) return { refuseForSeconds: byPair.retryAfterSeconds };
    return { delayMs: (await this.perAccount.take(account)).allowed ? 0 : LOGIN_SLOW_DOWN_MS };
  }
}
