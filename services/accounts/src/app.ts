import { publicRoutes } from "@chat/contracts";
import { createServer } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import type { AccountsDeps } from "./deps";
import { internalRoutes } from "./routes/internal";
import { inviteRoutes } from "./routes/invites";
import { linkifierRoutes } from "./routes/linkifiers";
import { pushRoutes } from "./routes/push";
import { registerStateRoutes } from "./routes/register-state";
import { serverRoutes } from "./routes/server";
import { userGroupRoutes } from "./routes/user-groups";
import { userStatusRoutes } from "./routes/user-status";
import { userRoutes } from "./routes/users";
import { alertWordRoutes } from "./routes/alert-words";
import { mutedUserRoutes } from "./routes/muted-users";
import { botRoutes } from "./routes/bots";
import { customProfileFieldRoutes } from "./routes/custom-profile-fields";
import { profileRoutes } from "./routes/profile";
import { settingsRoutes } from "./routes/settings";
import { presenceRoutes } from "./routes/presence";
import { playgroundRoutes } from "./routes/playgrounds";
import { realmDomainRoutes } from "./routes/realm-domains";
import { mobilePushRoutes } from "./routes/mobile-push";
import { pageRoutes } from "./routes/pages";
import { passwordResetPageRoutes } from "./routes/pages-password-reset";
import { emailChangePageRoutes } from "./routes/pages-email-change";
import { multiuseSignupPageRoutes } from "./routes/pages-multiuse-signup";

/** One plugin per resource; each registers its contract routes. */
const ROUTE_PLUGINS: Array<(app: FastifyInstance, deps: AccountsDeps) => void> = [
  internalRoutes,
  serverRoutes,
  userRoutes,
  userGroupRoutes,
  userStatusRoutes,
  linkifierRoutes,
  pushRoutes,
  inviteRoutes,
  settingsRoutes,
  alertWordRoutes,
  mutedUserRoutes,
  profileRoutes,
  botRoutes,
  customProfileFieldRoutes,
  presenceRoutes,
  playgroundRoutes,
  realmDomainRoutes,
  mobilePushRoutes,
  registerStateRoutes,
  pageRoutes,
  passwordResetPageRoutes,
  emailChangePageRoutes,
  multiuseSignupPageRoutes,
];

/** The accounts service's HTTP app. Never listens (main.ts or a test does). */
export function buildApp(deps: AccountsDeps, opts: { readiness?: Record<string, () => Promise<unknown>> } = {}): FastifyInstance {
  const app = createServer({
    name: "accounts",
    logger: deps.log,
    internalToken: deps.config.INTERNAL_TOKEN,
    validateResponses: deps.config.VALIDATE_RESPONSES,
    // Errors of the pages mails link to (a bad parameter, a key too long) are pages too.
    pageRoutes: publicRoutes,
    readiness: { postgres: () => deps.pool.query("SELECT 1"), ...opts.readiness },
  });
  for (const plugin of ROUTE_PLUGINS) plugin(app, deps);
  return app;
}
