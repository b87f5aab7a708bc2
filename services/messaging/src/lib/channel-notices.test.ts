import { describe, expect, it } from "vitest";
import {
  channelCreatedNotice,
  descriptionChangedNotice,
  newChannelsAnnouncement,
  permissionChangedNotice,
  permissionPolicyName,
  postPolicyChangedNotice,
  renamedNotice,
  retentionChangedNotice,
  subscribedYouNotice,
} from "./channel-notices";

const iago = { id: 7, fullName: "Iago" };
const publicChannel = { description: "", inviteOnly: false, historyPublicToSubscribers: true, isWebPublic: false };

describe("the notification bot's channel notices (Zulip 9's texts)", () => {
  it("tells a user someone subscribed them, one channel or several sorted by name", () => {
    expect(subscribedYouNotice(iago, ["Denmark"])).toBe("@**Iago|7** subscribed you to the channel #**Denmark**.");
    expect(subscribedYouNotice(iago, ["Rome", "Denmark"])).toBe("@**Iago|7** subscribed you to the following channels:\n\n* #**Denmark**\n* #**Rome**\n");
  });

  it("names a channel's access policy", () => {
    expect(permissionPolicyName(publicChannel)).toBe("Public");
    expect(permissionPolicyName({ ...publicChannel, isWebPublic: true })).toBe("Web-public");
    expect(permissionPolicyName({ ...publicChannel, inviteOnly: true })).toBe("Private, shared history");
    expect(permissionPolicyName({ ...publicChannel, inviteOnly: true, historyPublicToSubscribers: false })).toBe("Private, protected history");
  });

  it("opens a new channel with its policy and description, quoted", () => {
    expect(channelCreatedNotice(iago, publicChannel)).toBe("**Public** channel created by @_**Iago|7**. **Description:**\n```` quote\n*No description.*\n````");
    expect(channelCreatedNotice(iago, { ...publicChannel, inviteOnly: true, historyPublicToSubscribers: false, description: "Plans" })).toBe(
      "**Private, protected history** channel created by @_**Iago|7**. **Description:**\n```` quote\nPlans\n````",
    );
  });

  it("announces new channels", () => {
    expect(newChannelsAnnouncement(iago, ["a"])).toBe("@_**Iago|7** created a new channel #**a**.");
    expect(newChannelsAnnouncement(iago, ["a", "b"])).toBe("@_**Iago|7** created the following channels: #**a**, #**b**.");
  });

  it("tells a channel of its changed settings", () => {
    expect(renamedNotice(iago, "old", "new")).toBe("@_**Iago|7** renamed channel **old** to **new**.");
    expect(descriptionChangedNotice(iago, "", "Now")).toBe(
      "@_**Iago|7** changed the description for this channel.\n\n* **Old description:**\n```` quote\n*No description.*\n````\n* **New description:**\n```` quote\nNow\n````",
    );
    expect(permissionChangedNotice(iago, "Public", "Private, shared history")).toBe(
      "@_**Iago|7** changed the [access permissions](/help/channel-permissions) for this channel from **Public** to **Private, shared history**.",
    );
    expect(postPolicyChangedNotice(iago, 1, 2)).toBe(
      "@_**Iago|7** changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n* **Old**: All channel members can post\n* **New**: Only organization administrators can post\n",
    );
    expect(retentionChangedNotice(iago, -1, 30)).toBe(
      "@_**Iago|7** has changed the [message retention period](/help/message-retention-policy) for this channel:\n* **Old retention period**: Forever\n* **New retention period**: 30 days\n\nMessages in this channel will now be automatically deleted 30 days after they are sent.",
    );
    expect(retentionChangedNotice(iago, 30, -1)).toMatch(/\* \*\*New retention period\*\*: Forever\n\nMessages in this channel will now be retained forever\.$/);
  });
});
