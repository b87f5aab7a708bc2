import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { avatarUrl } from "./avatar";
import { AccountsUserCreated, AccountsUserUpdated } from "./events/accounts";

const md5 = (s: string) => createHash("md5").update(s).digest("hex");
const gravatar = { realmId: 3, deliveryEmail: " Real@Example.COM ", avatarSource: "G", avatarVersion: 4, avatarToken: null };
const uploaded = { ...gravatar, avatarSource: "U", avatarToken: "abc123" };

describe("avatarUrl (Zulip's get_avatar_field, with format_user_row's client_gravatar rule)", () => {
  it("an uploaded avatar is its URL with the version, whatever client_gravatar says", () => {
    for (const emailPublic of [true, false]) {
      expect(avatarUrl(uploaded, { clientGravatar: true, emailPublic })).toBe("/user_avatars/3/abc123.png?version=4");
    }
    expect(avatarUrl(uploaded, { clientGravatar: false, medium: true })).toBe("/user_avatars/3/abc123-medium.png?version=4");
  });

  it("a Gravatar hashes the delivery email and carries the version", () => {
    const url = `https://secure.gravatar.com/avatar/${md5("real@example.com")}?d=identicon&version=4`;
    expect(avatarUrl(gravatar, { clientGravatar: false })).toBe(url);
    expect(avatarUrl(gravatar, { clientGravatar: false, medium: true })).toBe(url.replace("identicon", "identicon&s=500"));
  });

  it("with client_gravatar, null only when the email is public (the client hashes the API email)", () => {
    expect(avatarUrl(gravatar, { clientGravatar: true, emailPublic: true })).toBeNull();
    expect(avatarUrl(gravatar, { clientGravatar: true, emailPublic: false })).toBe(avatarUrl(gravatar, { clientGravatar: false }));
  });
});

describe("user events of a previous release (no avatar beside the user)", () => {
  const user = {
    user_id: 7, realm_id: 3, email: "a@b.c", delivery_email: "a@b.c", full_name: "A", role: 400, is_active: true,
    is_bot: false, bot_type: null, bot_owner_id: null, date_joined: "2024-01-01T00:00:00.000Z", timezone: "",
  };

  it("still parse; a partial avatar gets the defaults, email_public null (unknown)", () => {
    expect(AccountsUserUpdated.parse({ user }).avatar).toBeUndefined();
    expect(AccountsUserCreated.parse({ user, avatar: {} }).avatar).toEqual({ avatar_source: "G", avatar_version: 1, avatar_token: null, email_public: null });
  });
});
