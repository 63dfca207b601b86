// The web application's HTTP side: its page routes (the bundled SPA) and the sign-in and setup routes,
// registered as an extension of `svc serve`; its session cookies authenticate the /api/v1/ops operations too.
import type { Elysia } from "elysia";
import { serverExtensions } from "../../extensions";
import page from "../../web/index.html";
import { authRoutes, WEB_PREFIX } from "./auth-routes";
import { LoginLimiter } from "./login-limiter";
import { framedPageRoutes } from "./pages";
import { sessionResolver } from "./session-resolver";

const noParse = { parse: "none" as const };

serverExtensions.http.push((core) => {
  const sessions = sessionResolver(core);
  const auth = authRoutes(core, new LoginLimiter(core.buckets));
  const plugin = (app: Elysia) =>
    app
      .get(`${WEB_PREFIX}/session`, auth.state, noParse)
      .post(`${WEB_PREFIX}/setup`, auth.setup, noParse)
      .post(`${WEB_PREFIX}/login`, auth.login, noParse)
      .post(`${WEB_PREFIX}/logout`, auth.logout, noParse)
      .post(`${WEB_PREFIX}/workspace`, auth.switchWorkspace, noParse)
      .get(`${WEB_PREFIX}/setup-password`, auth.setupTokenInfo, noParse)
      .post(`${WEB_PREFIX}/setup-password`, auth.setupPassword, noParse) as unknown as Elysia;
  // The SPA routes by the URL hash; only the entry page and the invitation link need server routes.
  return { plugins: [plugin], sessions, routes: framedPageRoutes(page, ["/", "/setup-password"]) };
});
