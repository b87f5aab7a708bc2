import { fetched, type Applier } from "./types";

/**
 * `presence` (Zulip's apply_event reads the user's row again; we have the event only). The
 * event's legacy entry is what a fresh register would say of the same row, so legacy state
 * takes it as it is. The modern form needs both times: an "active" report was stored as active
 * and connected at that moment (coming online, appearing, presence sharing turned on or off),
 * but an "idle" one (a first report while idle) leaves the active time at the user's join date,
 * which only the database knows: that event is left to the client.
 */
export const presenceAppliers: Record<string, Applier> = {
  presence(state, event, ctx) {
    if (!fetched(ctx, "presence")) return false;
    const website = event.presence?.website;
    if (!website || typeof website.timestamp !== "number") return false;
    if (state.presences === null || typeof state.presences !== "object") return true;
    if (ctx.slimPresence) {
      if (website.status !== "active") return false;
      state.presences[String(event.user_id)] = { active_timestamp: website.timestamp, idle_timestamp: website.timestamp };
      return true;
    }
    if (typeof event.email !== "string") return false;
    const { client, status, timestamp } = website;
    state.presences[event.email] = { aggregated: { client, status, timestamp }, website };
    return true;
  },
};
