import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";
import { notices } from "./settings-kit";

/** Outgoing webhook bots' services (Zulip's Service): POST/PATCH /bots and messaging's lookup. */

let t: Accounts;
let org: Org;
let hookId: number;
let hookToken: string;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
});
afterAll(() => t?.close());

/** `payload_url` and `service_payload_url` are JSON parameters: a string travels quoted. */
const json = (s: string) => JSON.stringify(s);
const createBot = (as: Org["member"], params: Record<string, unknown>) => t.call("POST", "/bots", { as: as.as, params });
const patchBot = (as: Org["member"], botId: number, params: Record<string, unknown>) => t.call("PATCH", `/bots/${botId}`, { as: as.as, params });
const lookup = (botId: number, realmId = org.realmId) => t.call("GET", `/internal/bots/${botId}/service`, { params: { realm_id: realmId } });

async function storedService(botId: number) {
  const { rows } = await t.pool.query("SELECT realm_id, name, base_url, interface, token FROM bot_services WHERE bot_id = $1", [botId]);
  return rows.map((r) => ({ ...r, realm_id: Number(r.realm_id) }));
}

async function counts() {
  const { rows } = await t.pool.query(
    "SELECT (SELECT count(*)::int FROM users WHERE realm_id = $1) AS users, (SELECT count(*)::int FROM bot_services) AS services",
    [org.realmId],
  );
  return rows[0];
}

describe("POST /bots with bot_type 3 (outgoing webhook)", () => {
  it("stores the bot's service with it: the URL, the interface, the name, a token made as an API key is", async () => {
    const res = await t.ok(
      await createBot(org.member, {
        full_name: "Hook Bot",
        short_name: "hook",
        bot_type: 3,
        payload_url: json("https://hooks.example.com/zulip?x=1"),
        interface_type: 2,
        service_name: "Hooks",
      }),
    );
    hookId = res.user_id;
    const [row] = await storedService(hookId);
    expect(row).toEqual({ realm_id: org.realmId, name: "Hooks", base_url: "https://hooks.example.com/zulip?x=1", interface: 2, token: expect.stringMatching(/^[A-Za-z0-9]{32}$/) });
    expect(row.token).not.toBe(res.api_key);
    hookToken = row.token;
    expect(await t.ok(await lookup(hookId))).toEqual({ result: "success", msg: "", base_url: "https://hooks.example.com/zulip?x=1", interface: 2, token: hookToken });
  });

  it("defaults to Zulip's generic interface and names the service after the short name", async () => {
    const a = await t.ok(await createBot(org.member2, { full_name: "Relay Bot", short_name: " relay ", bot_type: 3, payload_url: json("http://127.0.0.1:5002") }));
    const b = await t.ok(await createBot(org.member2, { full_name: "Relay Two", short_name: "relay2", bot_type: 3, payload_url: json("http://localhost:8080/x"), service_name: "" }));
    const [ra] = await storedService(a.user_id);
    const [rb] = await storedService(b.user_id);
    expect(ra).toMatchObject({ name: "relay", base_url: "http://127.0.0.1:5002", interface: 1 });
    expect(rb).toMatchObject({ name: "relay2", base_url: "http://localhost:8080/x", interface: 1 });
    expect(ra.token).not.toBe(rb.token);
  });

  it("refuses a missing or non-URL payload_url and an unknown interface; nothing is created", async () => {
    const before = await counts();
    await t.markOutbox();
    const hook = (extra: Record<string, unknown>) => createBot(org.member, { full_name: "Bad Hook", short_name: "badhook", bot_type: 3, ...extra });
    expectError(await hook({}), 400, "REQUEST_VARIABLE_MISSING", "Missing 'payload_url' argument");
    for (const bad of ["", "not a url", "hooks.example.com/zulip", "javascript:alert(1)", "http://bot:8080/"]) {
      expectError(await hook({ payload_url: json(bad) }), 400, "BAD_REQUEST", "payload_url is not a URL");
    }
    for (const interface_type of [0, 3]) {
      expectError(await hook({ payload_url: json("https://ok.example.com"), interface_type }), 400, "BAD_REQUEST", "Invalid interface type");
    }
    // As in Zulip, both are checked whatever the bot type.
    expectError(await createBot(org.member, { full_name: "Bad Gen", short_name: "badgen", interface_type: 5 }), 400, "BAD_REQUEST", "Invalid interface type");
    expectError(await createBot(org.member, { full_name: "Bad Gen", short_name: "badgen", payload_url: json("nope") }), 400, "BAD_REQUEST", "payload_url is not a URL");
    expect(await counts()).toEqual(before);
    expect(await t.outbox()).toEqual([]);
  });

  it("gives other bot types no service: their service parameters are ignored", async () => {
    for (const bot_type of [1, 2]) {
      const res = await t.ok(
        await createBot(org.member, { full_name: `Plain ${bot_type}`, short_name: `plain${bot_type}`, bot_type, payload_url: json("https://x.example.com"), interface_type: 2 }),
      );
      expect(await storedService(res.user_id)).toEqual([]);
      expectError(await lookup(res.user_id), 400, "BAD_REQUEST", "No such bot");
    }
  });

  it("GET /bots lists the bot as Zulip does, without its service", async () => {
    const bots = (await t.ok(await t.call("GET", "/bots", { as: org.member.as }))).bots;
    const hook = bots.find((b: any) => b.user_id === hookId);
    expect(hook).toMatchObject({ bot_type: 3, full_name: "Hook Bot", owner_id: org.member.user_id });
    expect(Object.keys(hook)).not.toContain("services");
  });
});

describe("PATCH /bots/{bot_id} and the service", () => {
  it("changes the URL and the interface: the answer reports them, realm_bot update to the owner and administrators", async () => {
    await t.markOutbox();
    const res = await t.ok(await patchBot(org.member, hookId, { service_payload_url: json("https://new.example.com/hook"), service_interface: 1 }));
    expect(res).toMatchObject({ full_name: "Hook Bot", service_payload_url: "https://new.example.com/hook", service_interface: 1, config_data: null, bot_owner: org.member.email });
    const service = { base_url: "https://new.example.com/hook", interface: 1, token: hookToken };
    const got = await notices(t);
    expect(got).toHaveLength(1);
    expect(got[0].type).toBe("accounts.bot_service.updated");
    expect(got[0].event).toEqual({ type: "realm_bot", op: "update", bot: { user_id: hookId, services: [service] } });
    expect(got[0].users).toEqual([org.owner.user_id, org.admin.user_id, org.member.user_id].sort((a, b) => a - b));
    expect(got[0].payload).toMatchObject({ user_id: hookId, service });
    expect(await storedService(hookId)).toEqual([{ realm_id: org.realmId, name: "Hooks", base_url: "https://new.example.com/hook", interface: 1, token: hookToken }]);
    expect(await t.ok(await lookup(hookId))).toMatchObject(service);
  });

  it("each field changes alone, the other kept; the same values again announce nothing", async () => {
    await t.markOutbox();
    const a = await t.ok(await patchBot(org.admin, hookId, { service_interface: 2 }));
    expect(a).toMatchObject({ service_payload_url: "https://new.example.com/hook", service_interface: 2 });
    const b = await t.ok(await patchBot(org.member, hookId, { service_payload_url: json("https://other.example.com/") }));
    expect(b).toMatchObject({ service_payload_url: "https://other.example.com/", service_interface: 2 });
    expect((await notices(t)).map((n) => n.event.bot.services[0])).toEqual([
      { base_url: "https://new.example.com/hook", interface: 2, token: hookToken },
      { base_url: "https://other.example.com/", interface: 2, token: hookToken },
    ]);
    await t.ok(await patchBot(org.member, hookId, { service_payload_url: json("https://other.example.com/"), service_interface: 2 }));
    expect(await notices(t)).toEqual([]);
  });

  it("other changes answer the current service; a bot without one answers null and ignores the fields", async () => {
    await t.markOutbox();
    const renamed = await t.ok(await patchBot(org.member, hookId, { full_name: "Hook Bot Two" }));
    expect(renamed).toMatchObject({ full_name: "Hook Bot Two", service_payload_url: "https://other.example.com/", service_interface: 2 });
    expect((await notices(t)).map((n) => `${n.event.type}/${n.event.op}`)).toEqual(["realm_user/update", "realm_bot/update"]);
    const generic = await t.ok(await patchBot(org.member, org.bot.user_id, { service_payload_url: json("https://x.example.com"), service_interface: 2 }));
    expect(generic).toMatchObject({ service_payload_url: null, service_interface: null, config_data: null });
    expect(await storedService(org.bot.user_id)).toEqual([]);
    expect(await notices(t)).toEqual([]);
  });

  it("a refused request changes nothing", async () => {
    const other = await t.createOrg();
    const before = await storedService(hookId);
    await t.markOutbox();
    const refuse = async (as: Org["member"], params: Record<string, unknown>, code: string, msg: string) =>
      expectError(await patchBot(as, hookId, params), 400, code, msg);
    await refuse(org.member, { full_name: "Renamed", service_payload_url: json("not a url") }, "BAD_REQUEST", "service_payload_url is not a URL");
    await refuse(org.member, { full_name: "Renamed", service_payload_url: json("https://fine.example.com"), service_interface: 7 }, "BAD_REQUEST", "Invalid interface type");
    await refuse(org.member, { service_payload_url: json("https://fine.example.com"), bot_owner_id: org.bot.user_id }, "BAD_REQUEST", "Failed to change owner, bots can't own other bots");
    await refuse(org.member2, { service_payload_url: json("https://fine.example.com") }, "BAD_REQUEST", "Insufficient permission");
    await refuse(other.admin, { service_payload_url: json("https://fine.example.com") }, "BAD_REQUEST", "No such bot");
    expect(await storedService(hookId)).toEqual(before);
    expect((await t.ok(await t.call("GET", "/bots", { as: org.member.as }))).bots.find((b: any) => b.user_id === hookId).full_name).toBe("Hook Bot Two");
    expect(await t.outbox()).toEqual([]);
  });
});

describe("GET /internal/bots/{bot_id}/service", () => {
  it("answers only for an outgoing webhook bot of the organization asked about", async () => {
    await t.ok(await lookup(hookId));
    const other = await t.createOrg();
    expectError(await lookup(hookId, other.realmId), 400, "BAD_REQUEST", "No such bot");
    const theirs = await t.ok(await createBot(other.member, { full_name: "Their Hook", short_name: "theirs", bot_type: 3, payload_url: json("https://theirs.example.com") }));
    expect(await t.ok(await lookup(theirs.user_id, other.realmId))).toMatchObject({ base_url: "https://theirs.example.com", interface: 1 });
    expectError(await lookup(theirs.user_id), 400, "BAD_REQUEST", "No such bot");
    expectError(await lookup(org.bot.user_id), 400, "BAD_REQUEST", "No such bot");
    expectError(await lookup(org.member.user_id), 400, "BAD_REQUEST", "No such bot");
    expectError(await lookup(99999999), 400, "BAD_REQUEST", "No such bot");
  });

  it("a deactivated bot keeps its service, and has it again when reactivated", async () => {
    const before = await t.ok(await lookup(hookId));
    await t.ok(await t.call("DELETE", `/bots/${hookId}`, { as: org.member.as }));
    expect(await t.ok(await lookup(hookId))).toEqual(before);
    await t.ok(await t.call("POST", `/users/${hookId}/reactivate`, { as: org.admin.as }));
    expect(await t.ok(await lookup(hookId))).toEqual(before);
    expect(before).toMatchObject({ base_url: "https://other.example.com/", interface: 2, token: hookToken });
  });
});
