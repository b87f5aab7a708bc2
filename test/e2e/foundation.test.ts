import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ajv2020 } from "ajv/dist/2020.js";
import { z } from "zod";
import { publicRoutes } from "@chat/contracts";
import { apiClient, demoClient, runDemo, startStack, type DemoOutput, type Stack } from "@chat/testkit";

/**
 * The whole system as `pnpm start` runs it (five processes), a demo organization made by
 * `pnpm chat demo --json`, and real HTTP through the gateway with the demo credentials.
 */

const DemoUserShape = z.strictObject({
  user_id: z.number().int().positive(),
  email: z.string().email(),
  api_key: z.string().regex(/^[A-Za-z0-9]{32}$/),
  role: z.number().int(),
  full_name: z.string().min(1),
});
const ChannelShape = z.strictObject({ stream_id: z.number().int().positive(), name: z.string().min(1) });
const DemoShape = z.strictObject({
  base_url: z.string().url(),
  orgs: z.tuple([
    z.strictObject({
      id: z.number().int().positive(),
      name: z.string().min(1),
      users: z.strictObject({
        owner: DemoUserShape,
        admin: DemoUserShape,
        moderator: DemoUserShape,
        member: DemoUserShape,
        member2: DemoUserShape,
        guest: DemoUserShape,
        bot: DemoUserShape,
      }),
      channels: z.strictObject({ public: ChannelShape, private: ChannelShape }),
    }),
    z.strictObject({
      id: z.number().int().positive(),
      name: z.string().min(1),
      users: z.strictObject({ owner: DemoUserShape, member: DemoUserShape }),
      channels: z.strictObject({ public: ChannelShape }),
    }),
  ]),
});

let stack: Stack;
let demo: DemoOutput;

beforeAll(async () => {
  stack = await startStack();
  demo = await runDemo(stack);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

const ROLES = { owner: 100, admin: 200, moderator: 300, member: 400, member2: 400, guest: 600, bot: 400 } as const;

describe("pnpm chat demo --json", () => {
  it("prints the agreed shape, pointing at the gateway", () => {
    DemoShape.parse(demo);
    expect(demo.base_url).toBe(stack.baseUrl);
    const [org, org2] = demo.orgs;
    expect(org.id).not.toBe(org2.id);
    for (const [key, role] of Object.entries(ROLES)) expect(org.users[key as keyof typeof ROLES].role).toBe(role);
    expect(org2.users.owner.role).toBe(100);
    expect(org2.users.member.role).toBe(400);
  });

  it("creates a fresh organization with a unique name on every call", async () => {
    const again = await runDemo(stack);
    DemoShape.parse(again);
    const names = [...demo.orgs, ...again.orgs].map((o) => o.name);
    expect(new Set(names).size).toBe(4);
    expect(again.orgs[0].id).not.toBe(demo.orgs[0].id);
    expect(again.orgs[0].users.owner.email).not.toBe(demo.orgs[0].users.owner.email);
  });
});

describe("through the gateway with the demo credentials", () => {
  it("GET /users/me answers for every role, the bot included", async () => {
    const org = demo.orgs[0];
    for (const key of Object.keys(ROLES) as Array<keyof typeof ROLES>) {
      const user = org.users[key];
      const res = await demoClient(demo, user).get("/users/me");
      expect(res.status, key).toBe(200);
      expect(res.body).toMatchObject({
        result: "success",
        msg: "",
        user_id: user.user_id,
        email: user.email,
        full_name: user.full_name,
        role: ROLES[key],
        is_owner: key === "owner",
        is_admin: key === "owner" || key === "admin",
        is_guest: key === "guest",
        is_bot: key === "bot",
        is_active: true,
      });
      expect(res.headers["x-ratelimit-limit"]).toBeDefined();
    }
  });

  it("GET /users lists the organization's users and nobody from the other one", async () => {
    const [org, org2] = demo.orgs;
    const res = await demoClient(demo, org.users.member).get("/users");
    expect(res.status).toBe(200);
    const members = res.body.members as Array<{ user_id: number; email: string; is_bot: boolean; bot_owner_id?: number | null; role: number }>;
    const ids = members.map((m) => m.user_id);
    for (const u of Object.values(org.users)) expect(ids).toContain(u.user_id);
    for (const u of Object.values(org2.users)) expect(ids).not.toContain(u.user_id);
    const bot = members.find((m) => m.user_id === org.users.bot.user_id)!;
    expect(bot).toMatchObject({ is_bot: true, bot_owner_id: org.users.member.user_id });
  });

  it("GET /users/{id} of another organization's user answers like a missing one", async () => {
    const [org, org2] = demo.orgs;
    const client = demoClient(demo, org.users.member);
    const foreign = await client.get(`/users/${org2.users.member.user_id}`);
    const missing = await client.get(`/users/999999999`);
    expect(foreign.status).toBe(missing.status);
    expect(foreign.body).toEqual(missing.body);
    expect(foreign.body.result).toBe("error");
  });

  it("GET /server_settings needs no credentials and reports feature level 267", async () => {
    const res = await apiClient(stack.baseUrl).get("/server_settings");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ result: "success", zulip_feature_level: 267 });
    expect(typeof res.body.zulip_version).toBe("string");
  });

  it("subscribed the demo users to the demo channels", async () => {
    const [org, org2] = demo.orgs;
    const names = async (user: (typeof org.users)[keyof typeof org.users]) => {
      const res = await demoClient(demo, user).get("/users/me/subscriptions");
      expect(res.status).toBe(200);
      return (res.body.subscriptions as Array<{ stream_id: number; invite_only: boolean }>).map((s) => s.stream_id).sort();
    };
    const both = [org.channels.public.stream_id, org.channels.private.stream_id].sort();
    expect(await names(org.users.owner)).toEqual(both);
    expect(await names(org.users.admin)).toEqual(both);
    expect(await names(org.users.member)).toEqual(both);
    expect(await names(org.users.moderator)).toEqual([org.channels.public.stream_id]);
    expect(await names(org.users.member2)).toEqual([org.channels.public.stream_id]);
    expect(await names(org.users.guest)).toEqual([org.channels.public.stream_id]);
    expect(await names(org.users.bot)).toEqual([org.channels.public.stream_id]);
    const res = await demoClient(demo, org2.users.member).get("/users/me/subscriptions");
    expect((res.body.subscriptions as Array<{ stream_id: number }>).map((s) => s.stream_id)).toEqual([org2.channels.public.stream_id]);
  });
});

describe("authentication failures through the gateway", () => {
  const expect401 = (res: { status: number; body: any; headers: Record<string, string> }, msg: string) => {
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ result: "error", msg, code: "UNAUTHORIZED" });
    expect(res.headers["www-authenticate"]).toBe('Basic realm="zulip"');
  };

  it("no credentials", async () => {
    expect401(await apiClient(stack.baseUrl).get("/users/me"), "Not logged in: API authentication or user session required");
  });

  it("a wrong key and an unknown email get the same answer", async () => {
    const member = demo.orgs[0].users.member;
    const wrongKey = await apiClient(stack.baseUrl, member.email, "a".repeat(32)).get("/users/me");
    const unknown = await apiClient(stack.baseUrl, "nobody@nowhere.example.com", "a".repeat(32)).get("/users/me");
    expect401(wrongKey, "Invalid API key");
    expect401(unknown, "Invalid API key");
  });

  it("a key of another user, or of the same email in another organization, is refused", async () => {
    const [org, org2] = demo.orgs;
    expect401(await apiClient(stack.baseUrl, org.users.member.email, org.users.member2.api_key).get("/users/me"), "Invalid API key");
    expect401(await apiClient(stack.baseUrl, org.users.member.email, org2.users.member.api_key).get("/users/me"), "Invalid API key");
  });

  it("a malformed key", async () => {
    const member = demo.orgs[0].users.member;
    expect401(await apiClient(stack.baseUrl, member.email, "short").get("/users/me"), "Malformed API key");
  });

  it("an undecodable Authorization header", async () => {
    const res = await apiClient(stack.baseUrl).get("/users/me", {}, { headers: { authorization: "Basic !!!notbase64" } });
    expect401(res, "Invalid authorization header for basic auth");
  });
});

describe("the OpenAPI document", () => {
  it("is served by the gateway without credentials and lists every public route", async () => {
    const res = await apiClient(stack.baseUrl).get("/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ openapi: "3.1.0", servers: [{ url: "/api/v1" }] });
    for (const r of publicRoutes) expect(res.body.paths[r.path]?.[r.method.toLowerCase()], `${r.method} ${r.path}`).toBeDefined();
  });

  it("describes the live responses", async () => {
    const doc = (await apiClient(stack.baseUrl).get("/openapi.json")).body;
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: "doc", components: doc.components, paths: {} });
    const check = (method: string, path: string, res: { status: number; body: unknown }) => {
      const op = doc.paths[path][method];
      const response = op.responses[String(res.status)];
      expect(response, `${method} ${path} documents ${res.status}`).toBeDefined();
      const schema = JSON.parse(JSON.stringify(response.content["application/json"].schema).replaceAll('"#/components/', '"doc#/components/'));
      const ok = ajv.validate(schema, res.body);
      expect(ok, `${method} ${path}: ${ajv.errorsText()}`).toBe(true);
    };
    const [org] = demo.orgs;
    for (const user of Object.values(org.users)) check("get", "/users/me", await demoClient(demo, user).get("/users/me"));
    const member = demoClient(demo, org.users.member);
    check("get", "/users", await member.get("/users"));
    check("get", "/users/{user_id}", await member.get(`/users/${org.users.owner.user_id}`));
    check("get", "/users/me/subscriptions", await member.get("/users/me/subscriptions"));
    check("get", "/streams", await member.get("/streams"));
    check("get", "/server_settings", await apiClient(stack.baseUrl).get("/server_settings"));
    check("post", "/messages", await member.post("/messages", { type: "stream", to: org.channels.public.name, topic: "openapi", content: "hello" }));
    check("get", "/messages", await member.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: [] }));
    check("post", "/register", await member.post("/register", { event_types: ["message"] }));
    check("get", "/users/me", await apiClient(stack.baseUrl).get("/users/me"));
    check("get", "/users/{user_id}", await member.get("/users/not-a-number"));
  });
});
