import {
  GetLinkifiers,
  GetUserGroups,
  GetUsers,
  InternalGetRealm,
  InternalGetUsers,
  InternalUserGroupCanMention,
  InternalUserGroupIsMember,
  InternalUserGroupMembers,
  type InternalRealm,
  type UserObject,
  type UserSummary,
} from "@chat/contracts";
import { ApiError, type Clock, type InternalClient } from "@chat/platform";

const path = (def: { path: string }, values: Record<string, number> = {}) =>
  def.path.replace(/\{(\w+)\}/g, (_m, k: string) => String(values[k]));

/**
 * What messaging asks accounts over HTTP: an organization's settings and system groups
 * (cached briefly: they change rarely and every send needs them), users on a replica miss,
 * and user-group membership.
 */
export class AccountsClient {
  private readonly realms = new Map<number, { at: number; realm: InternalRealm }>();
  private readonly linkifiers = new Map<number, { at: number; list: Array<{ pattern: string; url_template: string }> }>();

  constructor(
    private readonly http: InternalClient,
    private readonly clock: Clock,
    private readonly realmCacheMs: number,
  ) {}

  async getRealm(realmId: number): Promise<InternalRealm> {
    const now = this.clock.now().getTime();
    const hit = this.realms.get(realmId);
    if (hit && now - hit.at < this.realmCacheMs) return hit.realm;
    const res = await this.http.call<{ realm: InternalRealm }>("GET", path(InternalGetRealm, { realm_id: realmId }));
    this.realms.set(realmId, { at: now, realm: res.realm });
    return res.realm;
  }

  /** Users of one realm by id or email; unknown ones are simply absent. */
  async getUsers(realmId: number, by: { userIds?: number[]; emails?: string[] }): Promise<UserSummary[]> {
    const params: Record<string, unknown> = { realm_id: realmId };
    if (by.userIds) params.user_ids = by.userIds;
    if (by.emails) params.emails = by.emails;
    const res = await this.http.call<{ users: UserSummary[] }>(InternalGetUsers.method, InternalGetUsers.path, { params });
    return res.users.filter((u) => u.realm_id === realmId);
  }

  /**
   * Every user of a realm. The internal lookup is asked first (with neither ids nor emails);
   * if it lists nobody, the public user list is read on behalf of the realm's notification bot.
   */
  async getAllUsers(realmId: number): Promise<UserSummary[]> {
    const listed = await this.getUsers(realmId, {});
    if (listed.length > 0) return listed;
    const realm = await this.getRealm(realmId);
    const identity = { userId: realm.notification_bot_id, realmId, role: 400 as const, isBot: true, email: "", client: "internal" };
    const res = await this.http.call<{ members: UserObject[] }>(GetUsers.method, GetUsers.path, { identity, params: { client_gravatar: true } });
    return res.members.map((m) => ({
      user_id: m.user_id,
      realm_id: realmId,
      email: m.email,
      delivery_email: m.delivery_email ?? m.email,
      full_name: m.full_name,
      role: m.role,
      is_active: m.is_active,
      is_bot: m.is_bot,
      bot_type: m.bot_type,
      bot_owner_id: m.bot_owner_id ?? null,
      date_joined: m.date_joined,
      timezone: m.timezone,
    }));
  }

  /** The organization's linkifiers in its order (cached like the realm). */
  async getLinkifiers(realmId: number): Promise<Array<{ pattern: string; url_template: string }>> {
    const now = this.clock.now().getTime();
    const hit = this.linkifiers.get(realmId);
    if (hit && now - hit.at < this.realmCacheMs) return hit.list;
    const realm = await this.getRealm(realmId);
    const identity = { userId: realm.notification_bot_id, realmId, role: 400 as const, isBot: false, email: "", client: "internal" };
    const res = await this.http.call<{ linkifiers: Array<{ pattern: string; url_template: string }> }>(GetLinkifiers.method, GetLinkifiers.path, { identity });
    this.linkifiers.set(realmId, { at: now, list: res.linkifiers });
    return res.linkifiers;
  }

  /** The realm's user groups by name and id (group mentions), read like a member would. */
  async getUserGroups(realmId: number): Promise<Array<{ id: number; name: string }>> {
    const realm = await this.getRealm(realmId);
    // Read on behalf of the notification bot presented as a member: GET /user_groups refuses bots.
    const identity = { userId: realm.notification_bot_id, realmId, role: 400 as const, isBot: false, email: "", client: "internal" };
    const res = await this.http.call<{ user_groups: Array<{ id: number; name: string }> }>(GetUserGroups.method, GetUserGroups.path, { identity });
    return res.user_groups.map((g) => ({ id: g.id, name: g.name }));
  }

  async isGroupMember(realmId: number, groupId: number, userId: number): Promise<boolean> {
    try {
      const res = await this.http.call<{ is_member: boolean }>("GET", InternalUserGroupIsMember.path, {
        params: { realm_id: realmId, group_id: groupId, user_id: userId },
      });
      return res.is_member;
    } catch (err) {
      // An unknown group grants nothing.
      if (err instanceof ApiError && err.status < 500 && err.code !== "SERVICE_UNAVAILABLE") return false;
      throw err;
    }
  }

  /** Whether the user may mention the group (its can_mention_group setting, recursively). */
  async canMentionGroup(realmId: number, groupId: number, userId: number): Promise<boolean> {
    const res = await this.http.call<{ can_mention: boolean }>("GET", InternalUserGroupCanMention.path, {
      params: { realm_id: realmId, group_id: groupId, user_id: userId },
    });
    return res.can_mention;
  }

  async groupMembers(realmId: number, groupId: number): Promise<number[]> {
    try {
      const res = await this.http.call<{ user_ids: number[] }>("GET", InternalUserGroupMembers.path, {
        params: { realm_id: realmId, group_id: groupId },
      });
      return res.user_ids;
    } catch (err) {
      if (err instanceof ApiError && err.status < 500 && err.code !== "SERVICE_UNAVAILABLE") return [];
      throw err;
    }
  }
}
