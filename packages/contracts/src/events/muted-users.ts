import { z } from "zod";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

/** One muted user: who, and when (Unix seconds), as register's `muted_users` lists them. */
export const MutedUser = z.strictObject({ id: z.number().int(), timestamp: z.number().int() });
export type MutedUser = z.infer<typeof MutedUser>;

/** Client event `muted_users`: the user's whole list after a mute or unmute, to their own clients. */
export const MutedUsersEvent = z.strictObject({ type: z.literal("muted_users"), muted_users: z.array(MutedUser) });

/**
 * A user muted or unmuted someone; `muted_users` is the whole new list. Messaging keeps a
 * replica: a message from a muted sender starts read for the muting user, and muting marks the
 * muted user's messages read. `version` grows with every change, so a replica never goes back to
 * an older list.
 */
export const AccountsMutedUsersChanged = defineEvent(
  "accounts.muted_users.changed",
  z.object({
    user_id: z.number().int(),
    muted_users: z.array(MutedUser),
    version: z.number().int(),
    client: noticeOf(MutedUsersEvent),
  }),
);
