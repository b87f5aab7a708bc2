import type { AmqpClient } from "@chat/platform";
import type { AccountsDeps } from "../deps";

/** Placeholder until invitations land: nothing to consume yet. */
export async function consumeInviteAccepted(_amqp: AmqpClient, _deps: AccountsDeps): Promise<void> {}
