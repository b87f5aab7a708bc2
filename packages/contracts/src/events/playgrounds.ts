import { z } from "zod";
import { RealmPlayground } from "../routes/playgrounds";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

/** Client event `realm_playgrounds`: the organization's whole list after any change. */
export const RealmPlaygroundsClientEvent = z.strictObject({
  type: z.literal("realm_playgrounds"),
  realm_playgrounds: z.array(RealmPlayground),
});
export type RealmPlaygroundsClientEvent = z.infer<typeof RealmPlaygroundsClientEvent>;

/** The organization's code playgrounds changed; the client event goes to all its active users. */
export const AccountsPlaygroundsChanged = defineEvent(
  "accounts.playgrounds.changed",
  z.object({ client: noticeOf(RealmPlaygroundsClientEvent) }),
);
