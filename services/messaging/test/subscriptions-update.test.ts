import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let general: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member]);
  await m.createStream(org.owner, "hush", [org.owner], { invite_only: true });
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

const patch = (who: Org["member"], params: Record<string, unknown>) => m.call("PATCH", "/users/me/subscriptions", who, params);
const mySubs = async (who: Org["member"]) => (await m.ok(await m.call("GET", "/users/me/subscriptions", who))).subscriptions as any[];

describe("PATCH /users/me/subscriptions", () => {
  it("joins (creating what is missing, with the given color) and leaves in one request, answering both", async () => {
    const res = await m.ok(
      await patch(org.member, {
        add: JSON.stringify([{ name: "general" }, { name: "Patchwork", color: "#123456", description: "Quilts" }]),
        delete: JSON.stringify(["general"]),
      }),
    );
    expect(res).toEqual({
      result: "success",
      msg: "",
      subscribed: { [org.member.user_id]: ["Patchwork"] },
      already_subscribed: { [org.member.user_id]: ["general"] },
      removed: ["general"],
      not_removed: [],
    });
    const types = (await m.clientEvents()).map((e) => e.type);
    expect(types.indexOf("messaging.subscription.added")).toBeLessThan(types.indexOf("messaging.subscription.removed"));
    const subs = await mySubs(org.member);
    expect(subs.find((s) => s.name === "Patchwork")).toMatchObject({ color: "#123456", description: "Quilts" });
    expect(subs.find((s) => s.stream_id === general)).toBeUndefined();
  });

  it("either list may be left out; an empty request is refused", async () => {
    expect(await m.ok(await patch(org.member2, { delete: JSON.stringify(["general"]) }))).toEqual({
      result: "success",
      msg: "",
      subscribed: {},
      already_subscribed: {},
      removed: [],
      not_removed: ["general"],
    });
    expectError(await patch(org.member2, {}), 400, "BAD_REQUEST", 'Nothing to do. Specify at least one of "add" or "delete".');
    expectError(await patch(org.member2, { add: "[]", delete: "[]" }), 400, "BAD_REQUEST", 'Nothing to do. Specify at least one of "add" or "delete".');
  });

  it("a refused request changes nothing", async () => {
    const before = await mySubs(org.member2);
    const missing = await patch(org.member2, { add: JSON.stringify([{ name: "general" }]), delete: JSON.stringify(["nowhere"]) });
    expectError(missing, 400, "STREAM_DOES_NOT_EXIST", "Channel 'nowhere' does not exist");
    expect(missing.body.stream).toBe("nowhere");
    expectError(await patch(org.member2, { add: JSON.stringify([{ name: "hush" }]) }), 400, "BAD_REQUEST", "Unable to access channel (hush).");
    expectError(await patch(org.member2, { add: JSON.stringify([{ name: "general", color: "blue" }]) }), 400, "BAD_REQUEST", "color is not a valid hex color code");
    expect(await mySubs(org.member2)).toEqual(before);
    expect(await m.clientEvents()).toEqual([]);
  });
});

describe("PATCH /users/me/subscriptions/{stream_id}", () => {
  const prop = (property: string, value: string, streamId = general) => m.call("PATCH", `/users/me/subscriptions/${streamId}`, org.owner, { property, value });

  it("changes one property: a JSON boolean, or the raw string for a color", async () => {
    expect(await m.ok(await prop("pin_to_top", "true"))).toEqual({ result: "success", msg: "" });
    await m.ok(await prop("color", "#abcdef"));
    await m.ok(await prop("in_home_view", "false"));
    expect((await m.clientEvents()).map((e) => [e.event.property, e.event.value])).toEqual([
      ["pin_to_top", true],
      ["color", "#abcdef"],
      ["in_home_view", false],
      ["is_muted", true],
    ]);
    expect((await mySubs(org.owner)).find((s) => s.stream_id === general)).toMatchObject({ pin_to_top: true, color: "#abcdef", is_muted: true });
  });

  it("refuses what POST /users/me/subscriptions/properties refuses", async () => {
    expectError(await prop("pin_to_top", "yes"), 400, "BAD_REQUEST", "pin_to_top is not a boolean");
    expectError(await prop("volume", "true"), 400, "BAD_REQUEST", "Unknown subscription property: volume");
    expectError(await prop("pin_to_top", "true", 999999), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await m.call("PATCH", `/users/me/subscriptions/${general}`, org.member2, { property: "pin_to_top", value: "true" }), 400, "BAD_REQUEST", `Not subscribed to channel ID ${general}`);
    expectError(await m.call("PATCH", `/users/me/subscriptions/${general}`, org.owner, { property: "pin_to_top" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'value' argument");
  });
});
