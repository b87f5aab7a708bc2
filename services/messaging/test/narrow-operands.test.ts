import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * What each narrow operator takes as its operand, checked on every endpoint that takes a narrow
 * (GET /messages, GET /messages/matches_narrow, POST /messages/flags/narrow), as Zulip checks it:
 * the operand's type first, for every term, in its validator's words (a legacy pair refused as a
 * bad value of `narrow`); then what it names, as BAD_NARROW.
 */
let m: Messaging;
let org: Org;
let general: number;
const ids: Record<string, number> = {};

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member, org.member2]);
  ids.lunch = await m.send(org.owner, { type: "stream", to: "general", topic: "lunch", content: "pizza at https://example.com" });
  ids.deploys = await m.send(org.member2, { type: "stream", to: "general", topic: "deploys", content: "rocket launch" });
  ids.dm = await m.send(org.member, { type: "direct", to: JSON.stringify([org.member2.user_id]), content: "psst" });
  ids.group = await m.send(org.member2, { type: "direct", to: JSON.stringify([org.member.user_id, org.owner.user_id]), content: "all three" });
  ids.self = await m.send(org.member, { type: "direct", to: JSON.stringify([org.member.user_id]), content: "note to self" });
});
afterAll(async () => m?.close());

/** GET /messages as `who` with a narrow: an array is sent as JSON, a string as it is. */
const get = (who: TestUser, narrow: unknown) =>
  m.call("GET", "/messages", who, { anchor: "newest", num_before: 100, num_after: 0, narrow: typeof narrow === "string" ? narrow : JSON.stringify(narrow) });
const found = async (narrow: unknown, who: TestUser = org.member) => (await m.ok(await get(who, narrow))).messages.map((x: { id: number }) => x.id);
const term = (operator: string, operand: unknown, negated?: unknown) => (negated === undefined ? { operator, operand } : { operator, operand, negated });

const NAME_OR_ID = ["channel", "stream", "id", "sender", "dm-including", "group-pm-with"];
const EMAILS_OR_IDS = ["dm", "pm-with"];
const STRING_ONLY = ["channels", "streams", "topic", "subject", "is", "has", "in", "near", "search", "no-such-operator"];

describe("well-formed operands narrow as before", () => {
  it("every operator, in both forms", async () => {
    const { member, member2, owner } = org;
    const cases: Array<[unknown, number[]]> = [
      [[term("channel", "general")], [ids.lunch, ids.deploys]],
      [[term("channel", general)], [ids.lunch, ids.deploys]],
      [[["stream", "general"]], [ids.lunch, ids.deploys]],
      [[term("channels", "public")], [ids.lunch, ids.deploys]],
      [[["channel", "general"], term("topic", "lunch")], [ids.lunch]],
      [[["subject", "deploys"]], [ids.deploys]],
      [[term("sender", member2.email)], [ids.deploys, ids.group]],
      [[term("sender", member2.user_id)], [ids.deploys, ids.group]],
      [[term("dm", member2.email)], [ids.dm]],
      [[term("dm", [member2.user_id])], [ids.dm]],
      [[term("pm-with", `${member2.email}, ${owner.email}`)], [ids.group]],
      [[term("dm", [owner.user_id, member2.user_id])], [ids.group]],
      [[term("dm", [member.user_id])], [ids.self]],
      [[term("dm-including", member2.user_id)], [ids.dm, ids.group]],
      [[["dm-including", member2.email]], [ids.dm, ids.group]],
      [[term("group-pm-with", owner.user_id)], [ids.group]],
      [[term("is", "dm")], [ids.dm, ids.group, ids.self]],
      [[term("id", ids.deploys)], [ids.deploys]],
      [[["id", String(ids.deploys)]], [ids.deploys]],
      [[term("id", ids.deploys, true), term("channel", "general")], [ids.lunch]],
      [[term("search", "rocket")], [ids.deploys]],
      [[term("has", "link")], [ids.lunch]],
      [[term("in", "all"), term("in", "home")], [ids.lunch, ids.deploys, ids.dm, ids.group, ids.self]],
      // Zulip narrows nothing by `near` (the anchor does): any string is taken and changes nothing.
      [[term("near", String(ids.dm)), term("channel", "general")], [ids.lunch, ids.deploys]],
      [[["near", "x"], term("channel", "general")], [ids.lunch, ids.deploys]],
      [[term("topic", "lunch", false)], [ids.lunch]],
    ];
    for (const [narrow, expected] of cases) expect(await found(narrow), JSON.stringify(narrow)).toEqual(expected);
  });
});

describe("an operand of the wrong type is refused in Zulip's validator's words", () => {
  const refuses = async (narrow: unknown, msg: string) => {
    const res = await get(org.member, narrow);
    expectError(res, 400, "BAD_REQUEST", msg);
  };

  it("channel, stream, id, sender, dm-including, group-pm-with: a string or an integer", async () => {
    for (const operator of NAME_OR_ID) {
      for (const operand of [[], ["1"], [2], null, true, 1.5, { id: 1 }]) {
        await refuses([term(operator, operand)], 'elem["operand"] is not a string or integer');
      }
    }
  });

  it("dm, pm-with: a string or a list of integers", async () => {
    for (const operator of EMAILS_OR_IDS) {
      for (const operand of [null, 5, true, { id: 1 }]) await refuses([term(operator, operand)], 'elem["operand"] is not a string or an integer list');
      await refuses([term(operator, ["2"])], 'elem["operand"][0] is not an integer');
      await refuses([term(operator, [org.member2.user_id, org.member2.email])], 'elem["operand"][1] is not an integer');
      await refuses([term(operator, [1.5])], 'elem["operand"][0] is not an integer');
      await refuses([term(operator, [null])], 'elem["operand"][0] is not an integer');
    }
  });

  it("every other operator, unknown ones included, near among them: a string", async () => {
    for (const operator of STRING_ONLY) {
      for (const operand of [7, null, true, [], ["a"], [7, 7], [1], { x: 1 }]) await refuses([term(operator, operand)], 'elem["operand"] is not a string');
    }
  });

  it("search: text that is not blank", async () => {
    for (const operand of ["", "   "]) await refuses([term("search", operand)], 'elem["operand"] cannot be blank.');
  });

  it("negated: a boolean", async () => {
    for (const negated of ["yes", 1, null]) await refuses([term("topic", "lunch", negated)], 'elem["negated"] is not a boolean');
  });

  it("a legacy pair whose operand fails is a bad value of the narrow, as Zulip says it", async () => {
    for (const pair of [["near", []], ["near", ["a"]], ["near", 7], ["topic", 5], ["dm", -24], ["id", [7, 7]], ["channel", null], ["search", ""]]) {
      const res = await get(org.member, [pair]);
      expectError(res, 400, "REQUEST_VARIABLE_INVALID", `Bad value for 'narrow': ${JSON.stringify([pair])}`);
    }
  });

  it("a legacy pair is two strings, as Zulip takes it: an id or a list of ids is the other form's", async () => {
    const { member2 } = org;
    for (const pair of [["channel", general], ["stream", general], ["id", ids.dm], ["sender", member2.user_id], ["dm", [member2.user_id]], ["dm-including", member2.user_id]]) {
      const res = await get(org.member, [pair]);
      expectError(res, 400, "REQUEST_VARIABLE_INVALID", `Bad value for 'narrow': ${JSON.stringify([pair])}`);
    }
  });

  it("every term's type is checked before any term is looked up", async () => {
    await refuses([term("channel", "no-such-channel"), term("near", [])], 'elem["operand"] is not a string');
    // Operands of their types: the terms are looked up in order.
    expectError(await get(org.member, [term("sender", "nobody@nowhere.test"), term("dm", [])]), 400, "BAD_NARROW", "Invalid narrow operator: unknown user nobody@nowhere.test");
  });
});

describe("a string operand is a name or an email; only a JSON integer is an id (id's digits aside)", () => {
  it("a channel named by digits is narrowed to by its name, in both forms; its id is an integer", async () => {
    const year = await m.createStream(org.owner, "2024", [org.owner, org.member]);
    const inYear = await m.send(org.owner, { type: "stream", to: String(year), topic: "plans", content: "a year" });
    // A channel whose name is another channel's id: the name wins for a string.
    const named = await m.createStream(org.owner, String(general), [org.owner, org.member]);
    const inNamed = await m.send(org.owner, { type: "stream", to: String(named), topic: "t", content: "named like an id" });
    expect(await found([term("channel", "2024")])).toEqual([inYear]);
    expect(await found([["stream", "2024"]])).toEqual([inYear]);
    expect(await found([term("channel", year)])).toEqual([inYear]);
    expect(await found([term("stream", String(general))])).toEqual([inNamed]);
    expect(await found([["channel", String(general)]])).toEqual([inNamed]);
    expect(await found([term("channel", general)])).toEqual([ids.lunch, ids.deploys]);
  });

  it("a channel's id written as digits names no channel unless one has that name", async () => {
    const id = String(await m.createStream(org.owner, "by-id-only", [org.owner, org.member]));
    expectError(await get(org.member, [term("channel", id)]), 400, "BAD_NARROW", `Invalid narrow operator: unknown channel ${id}`);
    expectError(await get(org.member, [["stream", id]]), 400, "BAD_NARROW", `Invalid narrow operator: unknown channel ${id}`);
  });

  it("sender, dm-including, group-pm-with, dm: digits are an email, which no one has", async () => {
    const id = String(org.member2.user_id);
    for (const operator of ["sender", "dm-including", "group-pm-with"]) {
      expectError(await get(org.member, [term(operator, id)]), 400, "BAD_NARROW", `Invalid narrow operator: unknown user ${id}`);
      expectError(await get(org.member, [[operator, id]]), 400, "BAD_NARROW", `Invalid narrow operator: unknown user ${id}`);
    }
    for (const operand of [id, `${id},${org.owner.user_id}`, `${org.owner.email},${id}`]) {
      expectError(await get(org.member, [term("dm", operand)]), 400, "BAD_NARROW", `Invalid narrow operator: unknown user in ${operand}`);
    }
    // The same users as integers, and by email.
    expect(await found([term("sender", org.member2.user_id)])).toEqual([ids.deploys, ids.group]);
    expect(await found([["sender", org.member2.email]])).toEqual([ids.deploys, ids.group]);
  });

  it("id: digits are the message's id, in both forms", async () => {
    expect(await found([term("id", String(ids.dm))])).toEqual([ids.dm]);
    expect(await found([["id", String(ids.dm)]])).toEqual([ids.dm]);
  });
});

describe("an integer written as a float is refused where an id is due, as Zulip's validator refuses a float", () => {
  it("channel, stream, id, sender, dm-including, group-pm-with", async () => {
    for (const operator of NAME_OR_ID) {
      for (const operand of ["5.0", "1e0", "7E1", "-2.0"]) {
        expectError(await get(org.member, `[{"operator":"${operator}","operand":${operand}}]`), 400, "BAD_REQUEST", 'elem["operand"] is not a string or integer');
      }
    }
    const real = ids.deploys;
    expectError(await get(org.member, `[{"operator":"id","operand":${real}.0}]`), 400, "BAD_REQUEST", 'elem["operand"] is not a string or integer');
    expectError(await get(org.member, `[{"operator":"channel","operand":${general}.0}]`), 400, "BAD_REQUEST", 'elem["operand"] is not a string or integer');
  });

  it("dm, pm-with: an item of the list", async () => {
    for (const operator of EMAILS_OR_IDS) {
      expectError(await get(org.member, `[{"operator":"${operator}","operand":[${org.member2.user_id},${org.owner.user_id}.0]}]`), 400, "BAD_REQUEST", 'elem["operand"][1] is not an integer');
    }
  });

  it("the first term that fails is the one named; floats inside strings and legacy pairs are as before", async () => {
    expectError(await get(org.member, `[{"operator":"topic","operand":5},{"operator":"id","operand":5.0}]`), 400, "BAD_REQUEST", 'elem["operand"] is not a string');
    expect(await found(`[{"operator":"topic","operand":"v1.0"},{"operator":"channel","operand":${general}}]`)).toEqual([]);
    expectError(await get(org.member, `[["id",5.0]]`), 400, "REQUEST_VARIABLE_INVALID", `Bad value for 'narrow': [["id",5]]`);
    expect(await found(`[{"operator":"id","operand":${ids.dm}}]`)).toEqual([ids.dm]);
  });

  it("GET /messages/matches_narrow and POST /messages/flags/narrow alike, changing nothing", async () => {
    const narrow = `[{"operator":"dm","operand":[${org.member2.user_id}.0]}]`;
    expectError(
      await m.call("GET", "/messages/matches_narrow", org.member, { msg_ids: JSON.stringify([ids.dm]), narrow }),
      400,
      "BAD_REQUEST",
      'elem["operand"][0] is not an integer',
    );
    await m.outbox();
    expectError(
      await m.call("POST", "/messages/flags/narrow", org.member, { anchor: "newest", num_before: 100, num_after: 0, op: "add", flag: "starred", narrow }),
      400,
      "BAD_REQUEST",
      'elem["operand"][0] is not an integer',
    );
    expect(await m.outbox()).toEqual([]);
  });
});

describe("an operand that names nothing is BAD_NARROW", () => {
  const refuses = async (narrow: unknown, desc: string) => {
    const res = await get(org.member, narrow);
    expectError(res, 400, "BAD_NARROW", `Invalid narrow operator: ${desc}`);
    expect(res.body.desc).toBe(desc);
  };

  it("id: a message id, as an integer or digits", async () => {
    for (const operand of ["x", "", " 7", "-1", "1.5", "7,7", -1, "99999999999999999999"]) await refuses([term("id", operand)], "Invalid message ID");
    await refuses(`[{"operator":"id","operand":99999999999999999999}]`, "Invalid message ID");
  });

  it("dm: someone of the organization, each of them; an empty conversation is no one's", async () => {
    const { member2 } = org;
    for (const operand of ["", ",", " , ", `${member2.email},`, `,${member2.email}`, "nobody@nowhere.test", `${member2.email},nobody@nowhere.test`]) {
      await refuses([term("dm", operand)], `unknown user in ${operand}`);
      await refuses([["pm-with", operand]], `unknown user in ${operand}`);
    }
    await refuses([term("dm", [])], "unknown user in []");
    await refuses([term("dm", [member2.user_id, 999_999_999])], `unknown user in [${member2.user_id}, 999999999]`);
    await refuses(`[{"operator":"dm","operand":[99999999999999999999]}]`, "unknown user in [100000000000000000000]");
  });

  it("sender, dm-including, group-pm-with: someone of the organization", async () => {
    for (const operator of ["sender", "dm-including", "group-pm-with"]) {
      for (const operand of ["", "nobody@nowhere.test", 0, -3, 999_999_999]) await refuses([term(operator, operand)], `unknown user ${operand}`);
    }
  });

  it("channel: one the viewer may see; channels: public or web-public", async () => {
    for (const operand of ["", "no-such-channel", 0, -1, 999_999_999]) await refuses([term("channel", operand)], `unknown channel ${operand}`);
    await refuses(`[{"operator":"stream","operand":99999999999999999999}]`, "unknown channel 100000000000000000000");
    for (const operand of ["", "private", "all"]) await refuses([term("channels", operand)], `unknown channels operand ${operand}`);
  });

  it("is, has, in: their known operands; an unknown operator (with came after the feature level we speak) names itself", async () => {
    for (const operand of ["", "nonsense", "home"]) await refuses([term("is", operand)], `unknown 'is' operand ${operand}`);
    for (const operand of ["", "video", "links"]) await refuses([term("has", operand)], `unknown 'has' operand ${operand}`);
    for (const operand of ["", "nowhere", "inbox"]) await refuses([term("in", operand)], `unknown 'in' operand ${operand}`);
    await refuses([term("with", String(ids.dm))], "unknown operator with");
    await refuses([["color", "red"]], "unknown operator color");
  });
});

describe("the same checks on the other endpoints that take a narrow", () => {
  it("GET /messages/matches_narrow", async () => {
    const matches = (narrow: unknown) => m.call("GET", "/messages/matches_narrow", org.member, { msg_ids: JSON.stringify([ids.lunch, ids.dm]), narrow: JSON.stringify(narrow) });
    expectError(await matches([term("near", [7, 7])]), 400, "BAD_REQUEST", 'elem["operand"] is not a string');
    expectError(await matches([term("dm", "")]), 400, "BAD_NARROW", "Invalid narrow operator: unknown user in ");
    expectError(await matches([term("id", "x")]), 400, "BAD_NARROW", "Invalid narrow operator: Invalid message ID");
    expectError(await matches([["near", []]]), 400, "REQUEST_VARIABLE_INVALID", `Bad value for 'narrow': [["near",[]]]`);
    expect(Object.keys((await m.ok(await matches([term("dm", [org.member2.user_id])]))).messages)).toEqual([String(ids.dm)]);
  });

  it("POST /messages/flags/narrow, changing nothing", async () => {
    const mark = (narrow: unknown) =>
      m.call("POST", "/messages/flags/narrow", org.member, { anchor: "newest", num_before: 100, num_after: 0, op: "add", flag: "starred", narrow: JSON.stringify(narrow) });
    await m.outbox();
    expectError(await mark([term("dm", "")]), 400, "BAD_NARROW", "Invalid narrow operator: unknown user in ");
    expectError(await mark([term("dm", [])]), 400, "BAD_NARROW", "Invalid narrow operator: unknown user in []");
    expectError(await mark([term("near", "x"), term("id", [])]), 400, "BAD_REQUEST", 'elem["operand"] is not a string or integer');
    expectError(await mark([term("search", " ")]), 400, "BAD_REQUEST", 'elem["operand"] cannot be blank.');
    expect(await m.outbox()).toEqual([]);
    expect(await found([term("is", "starred")])).toEqual([]);
    const res = await m.ok(await mark([term("dm", [org.member.user_id])]));
    expect(res).toMatchObject({ processed_count: 1, updated_count: 1, first_processed_id: ids.self });
  });
});
