import { describe, expect, it } from "vitest";
import { isFullMember, passesCommonPolicy, passesWildcardPolicy, postPolicyRefusal } from "./permissions";

const now = new Date("2024-06-10T00:00:00Z");
const member = { role: 400, dateJoined: "2024-01-01T00:00:00Z" };
const newMember = { role: 400, dateJoined: "2024-06-09T00:00:00Z" };
const guest = { role: 600, dateJoined: "2020-01-01T00:00:00Z" };
const admin = { role: 200, dateJoined: "2024-06-09T00:00:00Z" };
const moderator = { role: 300, dateJoined: "2024-06-09T00:00:00Z" };

describe("permissions", () => {
  it("full membership waits for the threshold, except moderators and up", () => {
    expect(isFullMember(member, 90, now)).toBe(true);
    expect(isFullMember(newMember, 3, now)).toBe(false);
    expect(isFullMember(moderator, 3, now)).toBe(true);
    expect(isFullMember(guest, 0, now)).toBe(false);
  });
  it("applies stream_post_policy as Zulip does", () => {
    expect(postPolicyRefusal(1, guest, 0, now)).toBeNull();
    expect(postPolicyRefusal(2, moderator, 0, now)).toBe("Only organization administrators can send to this channel.");
    expect(postPolicyRefusal(2, admin, 0, now)).toBeNull();
    expect(postPolicyRefusal(4, member, 0, now)).toBe("Only organization administrators and moderators can send to this channel.");
    expect(postPolicyRefusal(4, moderator, 0, now)).toBeNull();
    expect(postPolicyRefusal(3, guest, 0, now)).toBe("Guests cannot send to this channel.");
    expect(postPolicyRefusal(3, newMember, 3, now)).toBe("New members cannot send to this channel.");
    expect(postPolicyRefusal(3, member, 3, now)).toBeNull();
  });
  it("evaluates the common and wildcard policies", () => {
    expect(passesCommonPolicy(1, member, 0, now)).toBe(true);
    expect(passesCommonPolicy(1, guest, 0, now)).toBe(false);
    expect(passesCommonPolicy(2, member, 0, now)).toBe(false);
    expect(passesWildcardPolicy(5, member, 0, now)).toBe(false);
    expect(passesWildcardPolicy(5, admin, 0, now)).toBe(true);
    expect(passesWildcardPolicy(1, guest, 0, now)).toBe(true);
    expect(passesWildcardPolicy(6, admin, 0, now)).toBe(false);
    expect(passesWildcardPolicy(7, moderator, 0, now)).toBe(true);
  });
});
