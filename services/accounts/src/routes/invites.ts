import {
  CreateMultiuseInvite,
  GetInvites,
  InternalAcceptInvite,
  InternalAcceptMultiuseInvite,
  InternalCleanupInvites,
  ResendInvite,
  RevokeInvite,
  RevokeMultiuseInvite,
  SendInvites,
} from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doAcceptInvite, doCleanupExpiredInvites, doResendInvite, doRevokeInvite, doSendInvites } from "../actions/invites";
import { doAcceptMultiuseInvite, doCreateMultiuseInvite, doRevokeMultiuseInvite } from "../actions/multiuse-invites";
import type { AccountsDeps } from "../deps";
import { getInvites } from "../queries/invites";

export function inviteRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, SendInvites, async ({ identity, params }) => {
    await doSendInvites(deps, identity, {
      inviteeEmails: params.invitee_emails,
      expiresInMinutes: params.invite_expires_in_minutes,
      inviteAs: params.invite_as,
      streamIds: params.stream_ids,
      includeRealmDefaultSubscriptions: params.include_realm_default_subscriptions,
      notifyReferrerOnJoin: params.notify_referrer_on_join,
    });
    return {};
  });

  registerRoute(app, GetInvites, async ({ identity }) => ({ invites: await getInvites(deps, identity) }));

  registerRoute(app, RevokeInvite, async ({ identity, params }) => {
    await doRevokeInvite(deps, identity, params.invite_id);
    return {};
  });

  registerRoute(app, ResendInvite, async ({ identity, params }) => {
    await doResendInvite(deps, identity, params.invite_id);
    return {};
  });

  registerRoute(app, CreateMultiuseInvite, async ({ identity, params }) => ({
    invite_link: await doCreateMultiuseInvite(deps, identity, {
      expiresInMinutes: params.invite_expires_in_minutes,
      inviteAs: params.invite_as,
      streamIds: params.stream_ids,
      includeRealmDefaultSubscriptions: params.include_realm_default_subscriptions,
    }),
  }));

  registerRoute(app, RevokeMultiuseInvite, async ({ identity, params }) => {
    await doRevokeMultiuseInvite(deps, identity, params.invite_id);
    return {};
  });

  registerRoute(app, InternalAcceptInvite, async ({ params }) => {
    const { user, apiKey } = await doAcceptInvite(deps, { realmId: params.realm_id, email: params.email, fullName: params.full_name, password: params.password });
    return { user_id: user.id, email: user.email, api_key: apiKey, role: user.role };
  });

  registerRoute(app, InternalAcceptMultiuseInvite, async ({ params }) => {
    const { user, apiKey } = await doAcceptMultiuseInvite(deps, {
      realmId: params.realm_id,
      key: params.key,
      email: params.email,
      fullName: params.full_name,
      password: params.password,
    });
    return { user_id: user.id, email: user.email, api_key: apiKey, role: user.role };
  });

  registerRoute(app, InternalCleanupInvites, async () => ({ deleted: await doCleanupExpiredInvites(deps) }));
}
