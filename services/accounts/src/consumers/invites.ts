import { AccountsInviteAccepted } from "@chat/contracts";
import { InvalidMessageError, type AmqpClient } from "@chat/platform";
import { doCompleteInviteAcceptance, type InviteAccepted } from "../actions/invites";
import type { AccountsDeps } from "../deps";

/** Finishes accepted invitations (channels, referrer notice); retried by the helper until messaging answers. */
export async function consumeInviteAccepted(amqp: AmqpClient, deps: AccountsDeps): Promise<void> {
  await amqp.consume({
    name: "accounts.invites",
    bindings: ["accounts.invite.accepted"],
    handler: async (envelope) => {
      const parsed = AccountsInviteAccepted.safeParse(envelope.payload);
      if (!parsed.success) throw new InvalidMessageError(parsed.error.message);
      await doCompleteInviteAcceptance(deps, envelope.realm_id, parsed.data as InviteAccepted);
    },
  });
}
