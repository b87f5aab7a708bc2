import {
  InternalGetBotService,
  InternalGetEmailNotificationState,
  InternalGetRealm,
  InternalGetUsers,
  InternalGetUserSettings,
  InternalListLinkifiers,
  InternalListUserGroups,
  InternalUserGroupCanMention,
  InternalUserGroupIsMember,
  InternalUserGroupMembers,
  type InternalRealm,
  type UserAvatarSummary,
  type UserSummary,
} from "@chat/contracts";
import { ApiError, type Clock, type InternalClient } from "@chat/platform";

const path = (def: { path: string }, values: Record<string, number> = {}) =>
  def.path.replace(/\{(\w+)\}/g, (_m, k: string) => String(values[k]));

/** Characters of URL-encoded JSON list one internal GET carries (well under the 16 KB header limit). */
const QUERY_PART_CHARS = 6000;

/** Splits a list for a GET's query string; an empty list gives no parts. */
export function inQueryParts<T>(items: T[], budget = QUERY_PART_CHARS): T[][] {
  const parts: T[][] = [];
  let part: T[] = [];
  let size = 0;
  for (const item of items) {
    const cost = encodeURIComponent(JSON.stringify(item)).length + 3;
    if (part.length > 0 && size + cost > budget) {
      parts.push(part);
      part = [];
      size = 0;
    }
    part.push(item);
    size += cost;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}

type Linkifiers = Array<{ pattern: string; url_template: string }>;

/** A user as accounts' internal lookup gives it (`avatar` absent from a previous release's). */
export type AccountsUser = UserSummary & { avatar?: UserAvatarSummary };

/**
 * What messaging asks accounts over its internal routes: an organization's settings, system
 * groups and linkifiers (cached: they change rarely and every send needs them), users and
 * personal settings on a replica miss, and user groups.
 *
 * The cached copies are dropped when accounts announces a change (`forget`, called by this
 * process's listener, consumers/realm-cache.ts); `realmCacheMs` bounds their age should an
 * announcement be missed.
 */
export class AccountsClient {
  private readonly realms = new Map<number, { at: number; realm: InternalRealm }>();
  private readonly linkifiers = new Map<number, { at: number; list: Linkifiers }>();
  /** Moves on every `forget` of the realm: an answer read across one is not kept. */
  private readonly generations = new Map<number, number>();
  private generationAll = 0;

  constructor(
    private readonly http: InternalClient,
    private readonly clock: Clock,
    private readonly realmCacheMs: number,
  ) {}

  async getRealm(realmId: number): Promise<InternalRealm> {
    const now = this.clock.now().getTime();
    const hit = this.realms.get(realmId);
    if (hit && now - hit.at < this.realmCacheMs) return hit.realm;
    const generation = this.generation(realmId);
    const res = await this.http.call<{ realm: InternalRealm }>("GET", path(InternalGetRealm, { realm_id: realmId }));
    if (generation === this.generation(realmId)) this.realms.set(realmId, { at: now, realm: res.realm });
    return res.realm;
  }

  /** Drops the realm's cached settings and linkifiers (accounts announced a change). */
  forget(realmId: number): void {
    this.generations.set(realmId, (this.generations.get(realmId) ?? 0) + 1);
    this.realms.delete(realmId);
    this.linkifiers.delete(realmId);
  }

  /** Drops every cached realm (announcements may have been missed). */
  forgetAll(): void {
    this.generationAll++;
    this.generations.clear();
    this.realms.clear();
    this.linkifiers.clear();
  }

  private generation(realmId: number): string {
    return `${this.generationAll}.${this.generations.get(realmId) ?? 0}`;
  }

  /**
   * Users of one realm by id or email; unknown ones are simply absent. Long lists are asked in
   * parts: the lookup is a GET, and a request line past the HTTP server's limit is refused (431).
   */
  async getUsers(realmId: number, by: { userIds?: number[]; emails?: string[]; fullNames?: string[] }): Promise<AccountsUser[]> {
    const users: AccountsUser[] = [];
    if (by.fullNames) {
      // Not combined with the others: mentions ask by name alone.
      for (const fullNames of inQueryParts(by.fullNames)) {
        const res = await this.http.call<{ users: AccountsUser[] }>(InternalGetUsers.method, InternalGetUsers.path, { params: { realm_id: realmId, full_names: fullNames } });
        for (const u of res.users) if (u.realm_id === realmId) users.push(u);
      }
      return users;
    }
    for (const userIds of by.userIds ? inQueryParts(by.userIds) : [undefined]) {
      for (const emails of by.emails ? inQueryParts(by.emails) : [undefined]) {
        const params: Record<string, unknown> = { realm_id: realmId };
        if (userIds) params.user_ids = userIds;
        if (emails) params.emails = emails;
        const res = await this.http.call<{ users: AccountsUser[] }>(InternalGetUsers.method, InternalGetUsers.path, { params });
        for (const u of res.users) if (u.realm_id === realmId) users.push(u);
      }
    }
    return users;
  }

  /** Every user of a realm (as GET /users lists them): fills the replica in one call. */
  async getAllUsers(realmId: number): Promise<AccountsUser[]> {
    const res = await this.http.call<{ users: AccountsUser[] }>(InternalGetUsers.method, InternalGetUsers.path, { params: { realm_id: realmId } });
    return res.users.filter((u) => u.realm_id === realmId);
  }

  /** The organization's linkifiers in its order (cached like the realm). */
  async getLinkifiers(realmId: number): Promise<Linkifiers> {
    const now = this.clock.now().getTime();
    const hit = this.linkifiers.get(realmId);
    if (hit && now - hit.at < this.realmCacheMs) return hit.list;
    const generation = this.generation(realmId);
    const res = await this.http.call<{ linkifiers: Linkifiers }>(InternalListLinkifiers.method, InternalListLinkifiers.path, {
      params: { realm_id: realmId },
    });
    if (generation === this.generation(realmId)) this.linkifiers.set(realmId, { at: now, list: res.linkifiers });
    return res.linkifiers;
  }

  /** The realm's named user groups, system ones included (group mentions, group settings). */
  async getUserGroups(realmId: number): Promise<Array<{ id: number; name: string; is_system_group: boolean }>> {
    const res = await this.http.call<{ user_groups: Array<{ id: number; name: string; is_system_group: boolean }> }>(
      InternalListUserGroups.method,
      InternalListUserGroups.path,
      { params: { realm_id: realmId } },
    );
    return res.user_groups;
  }

  /** An outgoing webhook bot's service; null when accounts knows none for it (another organization's, or none set). */
  async getBotService(realmId: number, botId: number): Promise<{ base_url: string; interface: number; token: string } | null> {
    try {
      return await this.http.call<{ base_url: string; interface: number; token: string }>("GET", path(InternalGetBotService, { bot_id: botId }), {
        params: { realm_id: realmId },
      });
    } catch (err) {
      if (err instanceof ApiError && err.status < 500 && err.code !== "SERVICE_UNAVAILABLE") return null;
      throw err;
    }
  }

  /** Current personal settings of some users (replica misses); unknown users are absent. */
  async getUserSettings(realmId: number, userIds: number[]): Promise<Array<{ user_id: number; settings: Record<string, unknown> }>> {
    const users: Array<{ user_id: number; settings: Record<string, unknown> }> = [];
    for (const part of inQueryParts(userIds)) {
      const res = await this.http.call<{ users: typeof users }>(InternalGetUserSettings.method, InternalGetUserSettings.path, {
        params: { realm_id: realmId, user_ids: part },
      });
      users.push(...res.users);
    }
    return users;
  }

  /**
   * Users' last activity (null: never), those whose address has accounts in other organizations
   * too, and whether the organization allows content in notification emails.
   */
  async getEmailNotificationState(
    realmId: number,
    userIds: number[],
  ): Promise<{ contentAllowed: boolean; lastActive: Map<number, Date | null>; inOtherRealms: Set<number> }> {
    const res = await this.http.call<{
      message_content_allowed_in_email_notifications: boolean;
      users: Array<{ user_id: number; last_active_time: number | null; has_accounts_in_other_realms?: boolean }>;
    }>(InternalGetEmailNotificationState.method, InternalGetEmailNotificationState.path, { params: { realm_id: realmId, user_ids: userIds } });
    return {
      contentAllowed: res.message_content_allowed_in_email_notifications,
      lastActive: new Map(res.users.map((u) => [u.user_id, u.last_active_time === null ? null : new Date(u.last_active_time * 1000)])),
      // Absent from a previous release's accounts: as if not.
      inOtherRealms: new Set(res.users.filter((u) => u.has_accounts_in_other_realms === true).map((u) => u.user_id)),
    };
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
