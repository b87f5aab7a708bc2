import {
  InternalAuthenticate,
  InternalCreateRealm,
  InternalCreateUser,
  InternalGetBotService,
  InternalGetDigestRecipients,
  InternalGetEmailNotificationState,
  InternalGetRealm,
  InternalGetUsers,
  InternalGetUserSettings,
  InternalListLinkifiers,
  InternalListUserGroups,
  InternalResetApiKey,
  InternalSetBillingAdmin,
  InternalSetCanCreateUsers,
  InternalUserGroupCanMention,
  InternalUserGroupIsMember,
  InternalUserGroupMembers,
} from "@chat/contracts";
import { organizationUrl, registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doSetBillingAdmin } from "../actions/profile";
import { doCreateRealm } from "../actions/realms";
import { doCreateUser, doResetApiKey, doSetCanCreateUsers } from "../actions/users";
import type { AccountsDeps } from "../deps";
import { authenticateApiKey } from "../queries/auth";
import { getInternalBotService } from "../queries/bot-services";
import { getLinkifiers } from "../queries/linkifiers";
import { accessRealm, getInternalRealm } from "../queries/realms";
import { unixSeconds } from "../lib/presence";
import { getUserPresence } from "../store/presence";
import { selectUsersWithAccountsInOtherRealms } from "../store/users";
import { getDigestRecipientsPage, recentJoinsOf } from "../queries/digest-recipients";
import { getInternalUserSettings } from "../queries/settings";
import { getInternalUserGroups, groupCanMention, groupIsMember, groupRecursiveMembers } from "../queries/user-groups";
import { getInternalUsers } from "../queries/users";

/** Service-to-service routes: the gateway's auth check, the admin CLI, other services' lookups. */
export function internalRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, InternalAuthenticate, async ({ params }) => {
    const { user: u, realm } = await authenticateApiKey(deps, params.email, params.api_key);
    return { user_id: u.id, realm_id: u.realmId, realm_string_id: realm.stringId, role: u.role, is_bot: u.isBot, bot_type: u.botType, email: u.email };
  });

  registerRoute(app, InternalGetUsers, async ({ params }) => ({
    users: await getInternalUsers(deps, params.realm_id, params.user_ids, params.emails, params.full_names),
  }));

  registerRoute(app, InternalCreateRealm, async ({ params }) => {
    const r = await doCreateRealm(deps, {
      name: params.name,
      stringId: params.string_id,
      ownerEmail: params.owner_email,
      ownerFullName: params.owner_full_name,
      ownerPassword: params.owner_password,
    });
    return {
      realm_id: r.realm.id,
      string_id: r.realm.stringId,
      realm_url: organizationUrl(deps.config, r.realm.stringId),
      owner: { user_id: r.owner.id, email: r.owner.email, api_key: r.apiKey },
    };
  });

  registerRoute(app, InternalCreateUser, async ({ params }) => {
    const { user, apiKey } = await doCreateUser(deps, {
      realmId: params.realm_id,
      email: params.email,
      fullName: params.full_name,
      role: params.role,
      password: params.password,
      botType: params.bot_type,
      botOwnerId: params.bot_owner_id,
    });
    return { user_id: user.id, email: user.email, api_key: apiKey };
  });

  registerRoute(app, InternalResetApiKey, async ({ params }) => {
    const { user, apiKey } = await doResetApiKey(deps, params.realm_id, params.email);
    return { user_id: user.id, email: user.email, api_key: apiKey };
  });

  registerRoute(app, InternalSetBillingAdmin, async ({ params }) => {
    await doSetBillingAdmin(deps, params.realm_id, params.user_id, params.is_billing_admin);
    return {};
  });

  registerRoute(app, InternalSetCanCreateUsers, async ({ params }) => {
    await doSetCanCreateUsers(deps, params.realm_id, params.user_id, params.can_create_users);
    return {};
  });

  registerRoute(app, InternalGetRealm, async ({ params }) => ({ realm: await getInternalRealm(deps, params.realm_id) }));

  registerRoute(app, InternalGetBotService, async ({ params }) => getInternalBotService(deps, params.realm_id, params.bot_id));

  registerRoute(app, InternalUserGroupIsMember, async ({ params }) => ({
    is_member: await groupIsMember(deps, params.realm_id, params.group_id, params.user_id),
  }));

  registerRoute(app, InternalUserGroupMembers, async ({ params }) => ({
    user_ids: await groupRecursiveMembers(deps, params.realm_id, params.group_id),
  }));

  registerRoute(app, InternalListUserGroups, async ({ params }) => ({ user_groups: await getInternalUserGroups(deps, params.realm_id) }));

  registerRoute(app, InternalListLinkifiers, async ({ params }) => ({ linkifiers: await getLinkifiers(deps, params.realm_id) }));

  registerRoute(app, InternalGetUserSettings, async ({ params }) => ({
    users: await getInternalUserSettings(deps.pool, params.realm_id, params.user_ids),
  }));

  registerRoute(app, InternalUserGroupCanMention, async ({ params }) => ({
    can_mention: await groupCanMention(deps, params.realm_id, params.group_id, params.user_id),
  }));

  // Messaging's missed-message emails (at most 100 users a call: one query each is enough).
  registerRoute(app, InternalGetEmailNotificationState, async ({ params }) => {
    const realm = await accessRealm(deps, params.realm_id);
    const inOtherRealms = await selectUsersWithAccountsInOtherRealms(deps.pool, realm.id, params.user_ids);
    const users = [];
    for (const userId of params.user_ids) {
      const presence = await getUserPresence(deps.pool, realm.id, userId);
      users.push({
        user_id: userId,
        last_active_time: presence?.lastActive ? unixSeconds(presence.lastActive) : null,
        has_accounts_in_other_realms: inOtherRealms.has(userId),
      });
    }
    return { message_content_allowed_in_email_notifications: realm.messageContentAllowedInEmailNotifications, users };
  });

  // Messaging's weekly digest emails: who gets one today, a page at a time.
  registerRoute(app, InternalGetDigestRecipients, async ({ params }) => {
    const users = await getDigestRecipientsPage(deps.pool, recentJoinsOf(deps), {
      weekday: params.weekday,
      inactiveSince: new Date(params.inactive_since * 1000),
      joinedSince: new Date(params.joined_since * 1000),
      afterUserId: params.after_user_id,
      limit: params.limit,
    });
    return {
      users: users.map((u) => ({
        realm_id: u.realmId,
        user_id: u.userId,
        delivery_email: u.deliveryEmail,
        full_name: u.fullName,
        role: u.role,
        last_active_time: u.lastActive ? unixSeconds(u.lastActive) : null,
        new_users: u.newUsers,
      })),
    };
  });
}
