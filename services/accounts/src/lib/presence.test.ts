import { describe, expect, it } from "vitest";
import { legacyPresence, modernPresence, presenceChange } from "./presence";

const T0 = new Date("2024-05-01T12:00:00Z");
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const sec = (s: number) => Math.floor(at(s).getTime() / 1000);

describe("presenceChange (Zulip's do_update_user_presence)", () => {
  it("a first report creates the row, and coming online is news", () => {
    expect(presenceChange(null, "active", at(0))).toEqual({ times: { lastActive: at(0), lastConnected: at(0) }, changed: true, becameOnline: true });
    expect(presenceChange(null, "idle", at(0))).toEqual({ times: { lastActive: null, lastConnected: at(0) }, changed: true, becameOnline: false });
  });

  it("reports within 55 s of the stored ones change nothing", () => {
    const row = { lastActive: at(0), lastConnected: at(0) };
    expect(presenceChange(row, "active", at(55)).changed).toBe(false);
    expect(presenceChange(row, "idle", at(55)).changed).toBe(false);
    expect(presenceChange(row, "idle", at(56))).toEqual({ times: { lastActive: at(0), lastConnected: at(56) }, changed: true, becameOnline: false });
    expect(presenceChange(row, "active", at(56))).toEqual({ times: { lastActive: at(56), lastConnected: at(56) }, changed: true, becameOnline: false });
  });

  it("active after more than the offline threshold (200 s) without activity is coming back online", () => {
    const row = { lastActive: at(0), lastConnected: at(180) };
    expect(presenceChange(row, "active", at(200)).becameOnline).toBe(false);
    expect(presenceChange(row, "active", at(201))).toEqual({ times: { lastActive: at(201), lastConnected: at(201) }, changed: true, becameOnline: true });
    expect(presenceChange(row, "idle", at(400)).becameOnline).toBe(false);
  });

  it("never moves a time back for a late report", () => {
    const row = { lastActive: at(100), lastConnected: at(100) };
    expect(presenceChange(row, "active", at(0)).changed).toBe(false);
  });
});

describe("presence formats", () => {
  const row = (lastActive: Date | null, lastConnected: Date | null) => ({
    userId: 7, realmId: 1, email: "a@b.test", dateJoined: at(-1000), lastActive, lastConnected, lastUpdateId: 3,
  });

  it("modern: both timestamps, the join date for one never reported", () => {
    expect(modernPresence(row(at(0), at(60)))).toEqual({ active_timestamp: sec(0), idle_timestamp: sec(60) });
    expect(modernPresence(row(null, at(60)))).toEqual({ active_timestamp: sec(-1000), idle_timestamp: sec(60) });
  });

  it("legacy: active while the last activity is within 70 s of the last connection, else idle since that", () => {
    expect(legacyPresence(row(at(0), at(70)))).toEqual({
      aggregated: { client: "website", status: "active", timestamp: sec(0) },
      website: { client: "website", status: "active", timestamp: sec(0), pushable: false },
    });
    expect(legacyPresence(row(at(0), at(71))).website).toEqual({ client: "website", status: "idle", timestamp: sec(71), pushable: false });
  });
});
