import { z } from "zod";
import { UserSummary } from "../models";
import { defineEvent } from "./index";

/** A user was created (any role, bots included). */
export const AccountsUserCreated = defineEvent("accounts.user.created", z.object({ user: UserSummary }).passthrough());
/** A user's fields changed; `user` is the whole new summary. */
export const AccountsUserUpdated = defineEvent("accounts.user.updated", z.object({ user: UserSummary }).passthrough());
/** A user was deactivated; they can no longer authenticate. */
export const AccountsUserDeactivated = defineEvent("accounts.user.deactivated", z.object({ user: UserSummary }).passthrough());
/** A user's API key was replaced; cached credentials must be dropped at once. */
export const AccountsApiKeyReset = defineEvent("accounts.api_key.reset", z.object({ user_id: z.number().int(), email: z.string() }).passthrough());
/** An organization was created or its settings changed. */
export const AccountsRealmCreated = defineEvent("accounts.realm.created", z.object({ realm_id: z.number().int(), name: z.string(), string_id: z.string() }).passthrough());
export const AccountsRealmDeactivated = defineEvent("accounts.realm.deactivated", z.object({ realm_id: z.number().int() }).passthrough());
