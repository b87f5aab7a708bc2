import type { Queryable } from "@chat/platform";
import { SYSTEM_BOT_AVATAR_PATH } from "@chat/contracts";
import { isEmailPublic } from "../lib/avatar";
import { userObject } from "../lib/format";
import { canSeeDeliveryEmail, EMAIL_VISIBILITY } from "../lib/user-settings";
import { settingOfRealmUsers } from "../store/settings";
import { listRealmUsers, listSystemBots, userListVersion } from "../store/users";
import { profileDataOf } from "./custom-profile-fields";

/** One user of a formatted list: their object as JSON, with and without the delivery email. */
interface ListedUser {
  id: number;
  active: boolean;
  bot: boolean;
  /** Their email_address_visibility. */
  visibility: number;
  withEmail: string;
  withoutEmail: string;
}

/** An organization's users formatted once, read at one version of `user_list_versions`. */
export interface UserList {
  version: string;
  users: ListedUser[];
  /** `cross_realm_bots` as JSON (the same for every viewer). */
  botsJson: string;
}

export interface UserListVariant {
  clientGravatar: boolean;
  /** `profile_data` on humans (register always; GET /users when asked). */
  profileData: boolean;
}

/**
 * Each organization's user list, formatted, kept in this process: a 1,000-user organization's
 * list is a thousand rows from three tables and a thousand objects to build and serialize, for
 * every register. An entry is reused while its organization's version in `user_list_versions`
 * (moved by triggers on every table the list is made of) is still the one it was read at, so a
 * change made through any accounts process is seen by the next read of every other one.
 *
 * The version is read before the rows: a change committed in between leaves an entry newer than
 * its version says, which the next read replaces; never one older than it says. Bounded by the
 * number of users held in all (least recently used organizations go first).
 */
export class UserListCache {
  private readonly entries = new Map<string, UserList>();
  private readonly building = new Map<string, Promise<UserList>>();
  private heldUsers = 0;

  constructor(private readonly maxUsers: number) {}

  async get(db: Queryable, realmId: number, variant: UserListVariant): Promise<UserList> {
    const key = `${realmId}:${variant.clientGravatar ? 1 : 0}${variant.profileData ? 1 : 0}`;
    const version = await userListVersion(db, realmId);
    const held = this.entries.get(key);
    if (held && held.version === version) {
      // Most recently used last.
      this.entries.delete(key);
      this.entries.set(key, held);
      return held;
    }
    // Registers arriving together after a change share one read.
    const flight = `${key}@${version}`;
    let pending = this.building.get(flight);
    if (!pending) {
      pending = readUserList(db, realmId, variant, version).finally(() => this.building.delete(flight));
      this.building.set(flight, pending);
    }
    const list = await pending;
    this.keep(key, list);
    return list;
  }

  private keep(key: string, list: UserList): void {
    const old = this.entries.get(key);
    if (old) {
      // A slower read of an older version never replaces a newer one.
      if (BigInt(old.version) > BigInt(list.version)) return;
      this.heldUsers -= old.users.length;
      this.entries.delete(key);
    }
    if (list.users.length > this.maxUsers) return;
    this.entries.set(key, list);
    this.heldUsers += list.users.length;
    for (const [k, e] of this.entries) {
      if (this.heldUsers <= this.maxUsers) break;
      this.entries.delete(k);
      this.heldUsers -= e.users.length;
    }
  }
}

async function readUserList(db: Queryable, realmId: number, variant: UserListVariant, version: string): Promise<UserList> {
  const [users, bots, visibility, profiles] = await Promise.all([
    listRealmUsers(db, realmId),
    listSystemBots(db, realmId),
    settingOfRealmUsers(db, realmId, "email_address_visibility"),
    variant.profileData ? profileDataOf(db, realmId, null) : null,
  ]);
  // System bots' addresses are public (they have no email visibility of their own).
  const botOpts = { clientGravatar: variant.clientGravatar, emailPublic: true };
  return {
    version,
    users: users.map((u) => {
      const shown = (visibility.get(u.id) as number | undefined) ?? EMAIL_VISIBILITY.everyone;
      // Clients compute a Gravatar from the API email, which is the real one only for users
      // whose email everyone may see; the others' avatar_url is the URL (Zulip's format_user_row).
      const obj = userObject(u, { clientGravatar: variant.clientGravatar, emailPublic: isEmailPublic(shown) });
      const profile = profiles && !u.isBot ? { profile_data: profiles.get(u.id) ?? {} } : {};
      return {
        id: u.id,
        active: u.isActive,
        bot: u.isBot,
        visibility: shown,
        withEmail: JSON.stringify({ ...obj, ...profile }),
        withoutEmail: JSON.stringify({ ...obj, delivery_email: null, ...profile }),
      };
    }),
    // System bots have a fixed image (the gateway serves it), not a Gravatar, as in Zulip.
    botsJson: JSON.stringify(bots.map((u) => ({ ...userObject(u, botOpts), avatar_url: SYSTEM_BOT_AVATAR_PATH, is_system_bot: true }))),
  };
}

/**
 * What a guest whose organization limits them sees of the list: the humans they access (and
 * every bot); each other user as the JSON of Zulip's "Unknown user" stand-in, or not at all
 * when `standIn` is null (a client with the user_list_incomplete capability).
 */
export interface LimitedView {
  accessible: Set<number>;
  standIn: ((userId: number) => string) | null;
}

/**
 * The list's users (active or not) as one viewer sees them, as a JSON array. A stand-in counts as
 * active whatever the user's status, as Zulip's does.
 */
export function userListJson(list: UserList, viewer: { id: number; role: number }, active: boolean | null, limited?: LimitedView): string {
  const parts: string[] = [];
  for (const u of list.users) {
    if (limited && !u.bot && !limited.accessible.has(u.id)) {
      if (limited.standIn && active !== false) parts.push(limited.standIn(u.id));
      continue;
    }
    if (active !== null && u.active !== active) continue;
    parts.push(canSeeDeliveryEmail(viewer, u.id, u.visibility) ? u.withEmail : u.withoutEmail);
  }
  return `[${parts.join(",")}]`;
}

/** This process's user list cache (made on first use with the configured bound). */
export function userListsOf(deps: { userLists?: UserListCache; config: { USER_LIST_CACHE_USERS: number } }): UserListCache {
  deps.userLists ??= new UserListCache(deps.config.USER_LIST_CACHE_USERS);
  return deps.userLists;
}
