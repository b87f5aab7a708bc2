import type { LegacyClientPresence, LegacyPresence, ModernPresence, PresenceEvent } from "@chat/contracts";
import type { PresenceRow, PresenceTimes } from "../store/presence";

/**
 * Zulip's presence rules (zerver/actions/presence.py, zerver/lib/presence.py) and defaults
 * (zproject/default_settings.py).
 */
export const PRESENCE_PING_INTERVAL_SECS = 60;
export const OFFLINE_THRESHOLD_SECS = 200;
/** A report this soon after the last stored one of its kind changes nothing (several open tabs). */
export const PRESENCE_UPDATE_MIN_FREQ_SECS = 55;
/** Legacy format: "active" while the last activity is this close to the last connection. */
export const PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECS = 70;
export const PRESENCE_HISTORY_LIMIT_DAYS = 14;
/** Beyond this many active users, coming online is told by polling only (forced updates still go). */
export const USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS = 100;

export const PRESENCE_STATUSES = ["active", "idle"] as const;
export type PresenceStatus = (typeof PRESENCE_STATUSES)[number];

export interface PresenceChange {
  times: PresenceTimes;
  /** Whether the row must be written (a new row, or a time moved). */
  changed: boolean;
  /** Active after not being active for longer than the offline threshold: others are told at once. */
  becameOnline: boolean;
}

/** Seconds as Zulip's datetime_to_timestamp gives them. */
export const unixSeconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** What a report of `status` at `logTime` does to a user's row (null: the user has none). */
export function presenceChange(row: PresenceTimes | null, status: PresenceStatus, logTime: Date): PresenceChange {
  // Missing times count as a day old: a first report always lands.
  const DAY_MS = 86_400_000;
  const sinceActive = row?.lastActive ? logTime.getTime() - row.lastActive.getTime() : DAY_MS;
  const sinceConnected = row?.lastConnected ? logTime.getTime() - row.lastConnected.getTime() : DAY_MS;
  const times: PresenceTimes = { lastActive: row?.lastActive ?? null, lastConnected: row?.lastConnected ?? null };
  let changed = row === null;
  // An older report than the stored one never moves a time back.
  if (sinceConnected > PRESENCE_UPDATE_MIN_FREQ_SECS * 1000) {
    times.lastConnected = logTime;
    changed = true;
  }
  if (status === "active" && sinceActive > PRESENCE_UPDATE_MIN_FREQ_SECS * 1000) {
    times.lastActive = logTime;
    // An active user is connected too: last_connected_time >= last_active_time.
    if (times.lastConnected === null || logTime > times.lastConnected) times.lastConnected = logTime;
    changed = true;
  }
  return { times, changed, becameOnline: status === "active" && sinceActive > OFFLINE_THRESHOLD_SECS * 1000 };
}

/** A time the user never had reads as the day they joined (the API always sent timestamps). */
const orJoined = (t: Date | null, row: Pick<PresenceRow, "dateJoined">) => t ?? row.dateJoined;

export function modernPresence(row: PresenceRow): ModernPresence {
  return { active_timestamp: unixSeconds(orJoined(row.lastActive, row)), idle_timestamp: unixSeconds(orJoined(row.lastConnected, row)) };
}

/** Zulip's format_legacy_presence_dict: one client, "website", never pushable. */
export function legacyClientPresence(row: PresenceRow): LegacyClientPresence {
  const active = orJoined(row.lastActive, row);
  const connected = orJoined(row.lastConnected, row);
  const isActive = active.getTime() + PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECS * 1000 >= connected.getTime();
  return isActive
    ? { client: "website", status: "active", timestamp: unixSeconds(active), pushable: false }
    : { client: "website", status: "idle", timestamp: unixSeconds(connected), pushable: false };
}

export function legacyPresence(row: PresenceRow): LegacyPresence {
  const website = legacyClientPresence(row);
  return { aggregated: { client: website.client, status: website.status, timestamp: website.timestamp }, website };
}

/** The `presence` client event for a user's row, as of `now` (its legacy entry is what a fresh register would say of the row). */
export function presenceEvent(row: PresenceRow, now: Date): PresenceEvent {
  return { type: "presence", user_id: row.userId, email: row.email, server_timestamp: now.getTime() / 1000, presence: { website: legacyClientPresence(row) } };
}
