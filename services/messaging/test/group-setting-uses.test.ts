import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

/** GET /internal/streams/group_setting_uses: what accounts asks before deactivating a user group. */

let m: Messaging;
let org: Org;
let other: Org;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
});
afterAll(async () => m?.close());

const uses = async (realmId: number, groupIds: number[]) =>
  (await m.ok(await m.call("GET", "/internal/streams/group_setting_uses", null, { realm_id: realmId, group_ids: groupIds }))).channels;

describe("GET /internal/streams/group_setting_uses", () => {
  it("lists the organization's channels whose can_remove_subscribers_group is one of the groups, not deleted ones", async () => {
    const team = await m.createGroup(org.owner, "removers", [org.member]);
    const spare = await m.createGroup(org.owner, "spare", [org.member]);
    const kept = await m.createStream(org.owner, "uses-team", [org.owner], { can_remove_subscribers_group: team });
    const alsoSpare = await m.createStream(org.owner, "uses-spare", [org.owner], { can_remove_subscribers_group: spare });
    const deleted = await m.createStream(org.owner, "deleted-uses-team", [org.owner], { can_remove_subscribers_group: team });
    await m.createStream(org.owner, "uses-default", [org.owner]);
    await m.ok(await m.call("DELETE", `/streams/${deleted}`, org.owner));
    const setting = ["can_remove_subscribers_group"];
    expect(await uses(org.realmId, [team])).toEqual([{ channel_id: kept, settings: setting }]);
    expect(await uses(org.realmId, [spare, team])).toEqual([
      { channel_id: kept, settings: setting },
      { channel_id: alsoSpare, settings: setting },
    ]);
    expect(await uses(other.realmId, [team, spare])).toEqual([]);
    expect(await uses(org.realmId, [])).toEqual([]);
  });

  it("checks its parameters", async () => {
    expectError(await m.call("GET", "/internal/streams/group_setting_uses", null, { realm_id: org.realmId }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'group_ids' argument");
  });
});
