// Sign-in attempts are limited per client address and per account, so passwords cannot be guessed at speed.
import { TokenBuckets } from "../../security/token-bucket";

export const LOGIN_ATTEMPTS_PER_IP_PER_HOUR = 60;
export const LOGIN_ATTEMPTS_PER_ACCOUNT_PER_HOUR = 10;

export class LoginLimiter {
  private readonly perIp = new TokenBuckets(LOGIN_ATTEMPTS_PER_IP_PER_HOUR);
  private readonly perAccount = new TokenBuckets(LOGIN_ATTEMPTS_PER_ACCOUNT_PER_HOUR);

  /** Seconds to wait before trying again, or 0 when this attempt may go ahead. */
  attempt(ip: string, email: string): number {
    const byIp = this.perIp.take(ip);
    if (!byIp.allowed) return byIp.retryAfterSeconds;
    const byAccount = this.perAccount.take(email.trim().toLowerCase());
    return byAccount.allowed ? 0 : byAccount.retryAfterSeconds;
  }
}
