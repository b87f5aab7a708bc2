import type { RouteDef } from "../route";
import * as drafts from "./drafts";
import * as events from "./events";
import * as flags from "./flags";
import * as messageQueries from "./message-queries";
import * as messages from "./messages";
import * as streams from "./streams";
import * as subscriptions from "./subscriptions";
import * as userTopics from "./user-topics";
import * as attachments from "./attachments";
import * as internal from "./internal";
import * as scheduledMessages from "./scheduled-messages";
import * as server from "./server";
import * as users from "./users";
import * as invites from "./invites";
import * as push from "./push";
import * as linkifiers from "./linkifiers";
import * as userStatus from "./user-status";
import * as userGroups from "./user-groups";
import * as settings from "./settings";
import * as alertWords from "./alert-words";
import * as mutedUsers from "./muted-users";
import * as profile from "./profile";
import * as bots from "./bots";
import * as customProfileFields from "./custom-profile-fields";
import * as typing from "./typing";
import * as reactions from "./reactions";
import * as realmEmoji from "./realm-emoji";
import * as presence from "./presence";
import * as playgrounds from "./playgrounds";
import * as savedSnippets from "./saved-snippets";
import * as mobilePush from "./mobile-push";
import * as realmDomains from "./realm-domains";
import * as realmExports from "./realm-exports";
import * as integrations from "./integrations";
import * as pages from "./pages";
import * as passwordResetPages from "./pages-password-reset";
import * as emailChangePages from "./pages-email-change";
import * as multiuseSignupPages from "./pages-multiuse-signup";

export * from "./drafts";
export * from "./events";
export * from "./flags";
export * from "./message-queries";
export * from "./messages";
export * from "./streams";
export * from "./subscriptions";
export * from "./user-topics";
export * from "./attachments";
export * from "./internal";
export * from "./scheduled-messages";
export * from "./server";
export * from "./users";
export * from "./invites";
export * from "./push";
export * from "./linkifiers";
export * from "./user-status";
export * from "./user-groups";
export * from "./settings";
export * from "./alert-words";
export * from "./muted-users";
export * from "./profile";
export * from "./bots";
export * from "./custom-profile-fields";
export * from "./typing";
export * from "./reactions";
export * from "./realm-emoji";
export * from "./presence";
export * from "./playgrounds";
export * from "./saved-snippets";
export * from "./mobile-push";
export * from "./realm-domains";
export * from "./realm-exports";
export * from "./integrations";
export * from "./pages";
export * from "./pages-password-reset";
export * from "./pages-email-change";
export * from "./pages-multiuse-signup";

const isRoute = (v: unknown): v is RouteDef =>
  typeof v === "object" && v !== null && "method" in v && "path" in v && "service" in v && "params" in v;

/**
 * Every route of every service. The gateway routes the public ones (auth "user" or "none") from
 * this table; tests validate responses against it. Add each resource module here.
 */
export const allRoutes: RouteDef[] = [internal, server, users, invites, push, linkifiers, userStatus, userGroups, events, scheduledMessages, attachments, drafts, flags, messageQueries, messages, streams, subscriptions, userTopics, settings, alertWords, mutedUsers, profile, bots, customProfileFields, typing, reactions, realmEmoji, presence, playgrounds, savedSnippets, mobilePush, realmDomains, realmExports, integrations, pages, passwordResetPages, emailChangePages, multiuseSignupPages].flatMap((m) => Object.values(m).filter(isRoute));

/** What the gateway exposes: everything but the service-to-service routes. */
export const publicRoutes = allRoutes.filter((r) => r.auth !== "internal" && !r.path.startsWith("/internal/"));
