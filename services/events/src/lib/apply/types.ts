export type State = Record<string, any>;
export type AppliedEvent = Record<string, any> & { type: string };

export interface ApplyContext {
  userId: number;
  /** The event types whose state was fetched; null = all. */
  fetchTypes: readonly string[] | null;
  /** Whether channel objects carry `subscribers` (register's include_subscribers). */
  includeSubscribers: boolean;
  /** Register's client_gravatar: gravatar URLs in user objects are null, computed by the client. */
  clientGravatar: boolean;
  /** Register's slim_presence: presences keyed by user id in the modern format. */
  slimPresence?: boolean;
  /** The user_list_incomplete client capability: a user a guest lost access to leaves realm_users (else a stand-in replaces them). */
  userListIncomplete?: boolean;
  /**
   * The server's CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE: a limited guest's presence state
   * holds only the users they access, so a user they lose access to leaves it.
   */
  accessLimitsPresence?: boolean;
}

/** Applies one event (without its id) in place; false when it cannot be applied faithfully. */
export type Applier = (state: State, event: AppliedEvent, ctx: ApplyContext) => boolean;

export const fetched = (ctx: ApplyContext, type: string) => ctx.fetchTypes === null || ctx.fetchTypes.includes(type);

/** Replaces (or appends) the item whose `key` matches. */
export function upsert<T extends Record<string, any>>(list: T[], key: keyof T, item: T): void {
  const i = list.findIndex((x) => x[key] === item[key]);
  if (i >= 0) list[i] = item;
  else list.push(item);
}

export const sortedUnique = (ids: Iterable<number>) => [...new Set(ids)].sort((a, b) => a - b);
