// Who is signed in, shared by every page, and the calls that change it.
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import { setCsrfToken, web } from "./api";
import type { SessionState } from "./types";

export async function loadSession(): Promise<SessionState> {
  const s = await web<SessionState>("GET", "/session");
  setCsrfToken(s.csrf_token ?? "");
  return s;
}

export const SessionContext = createContext<{ session: SessionState; refresh: () => Promise<void> } | null>(null);

export function useSession(): { session: SessionState; refresh: () => Promise<void> } {
  const s = useContext(SessionContext);
  if (!s) throw new Error("useSession outside the signed-in layout");
  return s;
}

export const canAdminister = (s: SessionState) => s.role === "owner" || s.role === "admin";
