import { describe, expect, it } from "vitest";
import { answeredRealmValue, checkRealmSettingValues, clientRealmValue } from "./realm-settings";

const problem = (given: Record<string, unknown>, isOwner = true) => {
  try {
    checkRealmSettingValues(given, isOwner);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
};

describe("checkRealmSettingValues", () => {
  it("stores what was sent, time limits as seconds or null, announcement channels as an id or null", () => {
    const values = checkRealmSettingValues(
      { name: "X", message_content_edit_limit_seconds: "unlimited", move_messages_within_stream_limit_seconds: 60, signup_announcements_stream_id: -1, new_stream_announcements_stream_id: 4, mandatory_topics: undefined },
      false,
    );
    expect([...values]).toEqual([
      ["name", "X"],
      ["message_content_edit_limit_seconds", null],
      ["move_messages_within_stream_limit_seconds", 60],
      ["signup_announcements_stream_id", null],
      ["new_stream_announcements_stream_id", 4],
    ]);
  });

  it("checks in Zulip's order: language, video call provider, GIPHY rating, retention (owners), other owner-only settings, limits", () => {
    expect(problem({ default_language: "xx", video_chat_provider: 9 })).toBe("Invalid language 'xx'");
    expect(problem({ video_chat_provider: 9, giphy_rating: 9 })).toBe("Invalid video_chat_provider 9");
    expect(problem({ giphy_rating: 9, message_retention_days: 0 })).toBe("Invalid giphy_rating 9");
    expect(problem({ message_retention_days: 0 }, false)).toBe("Must be an organization owner");
    expect(problem({ message_retention_days: 0 })).toBe("Bad value for 'message_retention_days': 0");
    expect(problem({ invite_required: true, message_content_delete_limit_seconds: 0 }, false)).toBe("Must be an organization owner");
    expect(problem({ message_content_delete_limit_seconds: "never" })).toBe("Bad value for 'message_content_delete_limit_seconds': never");
  });
});

describe("what clients see", () => {
  it("null retention and no announcement channel are -1; strings are answered as 'updated'", () => {
    expect(clientRealmValue("message_retention_days", null)).toBe(-1);
    expect(clientRealmValue("signup_announcements_stream_id", null)).toBe(-1);
    expect(clientRealmValue("message_content_edit_limit_seconds", null)).toBeNull();
    expect(answeredRealmValue("description", "hello")).toBe("updated");
    expect(answeredRealmValue("waiting_period_threshold", 3)).toBe(3);
  });
});
