import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, runDemo, startStack, type ApiClient, type ApiResponse, type DemoOutput, type Stack } from "@chat/testkit";
import { SMALL_POOLS } from "./lib/pools";

/**
 * Every role of the demo organization against every endpoint with a role rule: allowed exactly
 * where the spec (section 5.3, 4.6, 4.10, 4.14, 4.20) allows, and a refusal changes nothing.
 * Plus the administrator-only endpoints Zulip has for organization settings (linkifiers, custom
 * profile fields, user defaults, other users' accounts).
 */

const ROLES = ["owner", "admin", "moderator", "member", "guest", "bot"] as const;
type RoleName = (typeof ROLES)[number];
const ADMINS: RoleName[] = ["owner", "admin"];

let stack: Stack;
let demo: DemoOutput;
const matrix = new Map<string, Partial<Record<RoleName, string>>>();

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_USER_MAX: "1000000", ...SMALL_POOLS } });
  demo = await runDemo(stack);
}, 240_000);

afterAll(async () => {
  const head = `| rule | ${ROLES.join(" | ")} |\n| --- |${ROLES.map(() => " --- |").join("")}`;
  const rows = [...matrix].map(([rule, cells]) => `| ${rule} | ${ROLES.map((r) => cells[r] ?? "").join(" | ")} |`);
  process.stdout.write(`\nRole matrix (allowed ✓ / refused ✗, as observed):\n\n${head}\n${rows.join("\n")}\n\n`);
  await stack?.stop();
}, 60_000);

const org = () => demo.orgs[0];
const as = (role: RoleName | "member2"): ApiClient => {
  const u = org().users[role];
  return apiClient(stack.baseUrl, u.email, u.api_key);
};
let n = 0;
const unique = (p: string) => `${p}-${Date.now().toString(36)}-${n++}`;

function ok(res: ApiResponse, what: string): any {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

interface Rule {
  name: string;
  allowed: readonly RoleName[];
  /** Runs the action as `role`; `check` says whether its effect is there afterwards. */
  attempt(role: RoleName): Promise<{ res: ApiResponse; applied: () => Promise<boolean> }>;
}

async function invited(email: string): Promise<boolean> {
  const invites = ok(await as("owner").get("/invites"), "invites").invites as Array<{ email: string }>;
  return invites.some((i) => i.email === email);
}

async function subscribed(userRole: "member2" | RoleName, streamId: number): Promise<boolean> {
  const subs = ok(await as(userRole).get("/users/me/subscriptions"), "subscriptions").subscriptions as Array<{ stream_id: number }>;
  return subs.some((s) => s.stream_id === streamId);
}

const RULES: Rule[] = [
  {
    name: "DELETE /messages/{id} (administrators only)",
    allowed: ADMINS,
    async attempt(role) {
      const id = ok(await as("owner").post("/messages", { type: "stream", to: org().channels.public.stream_id, topic: "roles", content: unique("doomed") }), "send").id;
      const res = await as(role).delete(`/messages/${id}`);
      return { res, applied: async () => (await as("owner").get(`/messages/${id}`)).status !== 200 };
    },
  },
  {
    name: "GET /user_groups (members and administrators; not guests or bots)",
    allowed: ["owner", "admin", "moderator", "member"],
    async attempt(role) {
      const res = await as(role).get("/user_groups");
      return { res, applied: async () => res.status === 200 };
    },
  },
  {
    name: "DELETE /users/me/subscriptions of another user (administrators)",
    allowed: ADMINS,
    async attempt(role) {
      const ch = org().channels.public;
      ok(await as("owner").post("/users/me/subscriptions", { subscriptions: [{ name: ch.name }], principals: [org().users.member2.user_id] }), "subscribe member2");
      const res = await as(role).delete("/users/me/subscriptions", { subscriptions: [ch.name], principals: [org().users.member2.user_id] });
      return { res, applied: async () => !(await subscribed("member2", ch.stream_id)) };
    },
  },
  {
    name: "DELETE /users/me/subscriptions of a bot one owns (its owner, administrators)",
    allowed: ["owner", "admin", "member"],
    async attempt(role) {
      const ch = org().channels.public;
      // A bot owned by member; the guest and the demo bot do not own it.
      const bot = ok(await as("member").post("/bots", { full_name: unique("Roles bot"), short_name: unique("rbot") }), "bot");
      ok(await as("owner").post("/users/me/subscriptions", { subscriptions: [{ name: ch.name }], principals: [bot.user_id] }), "subscribe bot");
      const res = await as(role).delete("/users/me/subscriptions", { subscriptions: [ch.name], principals: [bot.user_id] });
      return {
        res,
        applied: async () => {
          const members = ok(await as("owner").get("/users/me/subscriptions", { include_subscribers: true }), "subs").subscriptions as Array<{ stream_id: number; subscribers: number[] }>;
          return !members.find((s) => s.stream_id === ch.stream_id)!.subscribers.includes(bot.user_id);
        },
      };
    },
  },
  {
    name: "POST /invites as one's own role (permission to invite)",
    allowed: ["owner", "admin", "moderator", "member"],
    async attempt(role) {
      const email = `${unique("inv")}@example.com`;
      const u = org().users[role];
      const res = await as(role).post("/invites", { invitee_emails: email, invite_as: role === "bot" ? 400 : u.role, stream_ids: [] });
      return { res, applied: () => invited(email) };
    },
  },
  {
    name: "POST /invites one role above one's own",
    // The owner has nothing above; inviting another owner is allowed to owners.
    allowed: ["owner"],
    async attempt(role) {
      const above: Record<RoleName, number> = { owner: 100, admin: 100, moderator: 200, member: 300, guest: 400, bot: 300 };
      const email = `${unique("inv")}@example.com`;
      const res = await as(role).post("/invites", { invitee_emails: email, invite_as: above[role], stream_ids: [] });
      return { res, applied: () => invited(email) };
    },
  },
  {
    name: "POST /invites as guest (a stricter role)",
    allowed: ["owner", "admin", "moderator", "member"],
    async attempt(role) {
      const email = `${unique("inv")}@example.com`;
      const res = await as(role).post("/invites", { invitee_emails: email, invite_as: 600, stream_ids: [] });
      return { res, applied: () => invited(email) };
    },
  },
  {
    name: "POST /realm/filters (administrators)",
    allowed: ADMINS,
    async attempt(role) {
      const pattern = `#${unique("p").replace(/-/g, "")}(?P<id>[0-9]+)`;
      const res = await as(role).post("/realm/filters", { pattern, url_template: "https://example.com/{id}" });
      return {
        res,
        applied: async () => (ok(await as("owner").get("/realm/linkifiers"), "linkifiers").linkifiers as Array<{ pattern: string }>).some((l) => l.pattern === pattern),
      };
    },
  },
  {
    name: "POST /realm/profile_fields (administrators)",
    allowed: ADMINS,
    async attempt(role) {
      const name = unique("field");
      const res = await as(role).post("/realm/profile_fields", { name, hint: "", field_type: 1 });
      return {
        res,
        applied: async () => (ok(await as("owner").get("/realm/profile_fields"), "fields").custom_fields as Array<{ name: string }>).some((f) => f.name === name),
      };
    },
  },
  {
    name: "PATCH /users/{id} of another user (administrators)",
    allowed: ADMINS,
    async attempt(role) {
      const name = unique("Renamed");
      const id = org().users.member2.user_id;
      const res = await as(role).patch(`/users/${id}`, { full_name: name });
      return { res, applied: async () => ok(await as("owner").get(`/users/${id}`), "user").user.full_name === name };
    },
  },
  {
    name: "DELETE /users/{id} of another user (administrators)",
    allowed: ADMINS,
    async attempt(role) {
      // member2 again each time: reactivated after every deactivation that went through.
      const id = org().users.member2.user_id;
      const res = await as(role).delete(`/users/${id}`);
      const applied = async () => {
        const active = ok(await as("owner").get(`/users/${id}`), "user").user.is_active === false;
        if (active) ok(await as("owner").post(`/users/${id}/reactivate`), "reactivate");
        return active;
      };
      return { res, applied };
    },
  },
];

describe("role rules", () => {
  for (const rule of RULES) {
    for (const role of ROLES) {
      const allowed = rule.allowed.includes(role);
      it(`${rule.name}: ${role} ${allowed ? "allowed" : "refused"}`, async () => {
        const { res, applied } = await rule.attempt(role);
        const cells = matrix.get(rule.name) ?? {};
        cells[role] = res.status === 200 ? "✓" : `✗ ${res.body?.code ?? res.status}`;
        matrix.set(rule.name, cells);
        const detail = `${role}: ${res.status} ${JSON.stringify(res.body)}`;
        if (allowed) {
          expect(res.status, detail).toBe(200);
          expect(await applied(), detail).toBe(true);
        } else {
          expect(res.status, detail).toBeGreaterThanOrEqual(400);
          expect(res.status, detail).toBeLessThan(500);
          expect(res.body.result, detail).toBe("error");
          if (rule.name.startsWith("GET ")) return;
          expect(await applied(), `${detail}: a refused request must change nothing`).toBe(false);
        }
      });
    }
  }
});
