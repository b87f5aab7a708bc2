import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { apiClient, freePort, runChat, startMailCatcher, startStack, type Stack } from "@chat/testkit";

/** The admin CLI (`pnpm chat ...`) against a running stack, checked through the public API. */

// Each test runs the CLI several times (a Node start each); leave room on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

/** Runs a command with --json and returns the single JSON object it printed. */
async function chatJson(args: string[], vars?: Record<string, string>) {
  const res = await runChat(vars ? { vars: { ...stack.vars, ...vars }, baseUrl: stack.baseUrl } : stack, [...args, "--json"]);
  expect(res.code, res.stderr).toBe(0);
  expect(res.stdout.trim().split("\n")).toHaveLength(1);
  return JSON.parse(res.stdout);
}

const uniq = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

async function newOrg() {
  const id = uniq();
  const org = await chatJson(["org", "create", "--name", `CLI ${id}`, "--string-id", `cli-${id}`, "--owner-email", `boss@cli-${id}.example.com`, "--owner-name", "Bo Boss"]);
  return { ...org, domain: `cli-${id}.example.com` };
}

describe("pnpm chat migrate", () => {
  it("reports nothing to do on a current database", async () => {
    const out = await chatJson(["migrate"]);
    expect(Object.keys(out.applied)).toEqual(expect.arrayContaining(["accounts", "messaging", "scheduler"]));
    for (const names of Object.values(out.applied)) expect(names).toEqual([]);
  });

  it("creates a missing database and applies every service's migrations", async () => {
    const url = new URL(stack.env.databaseUrl);
    const name = `${url.pathname.slice(1)}_fresh`;
    url.pathname = `/${name}`;
    try {
      // A pod's init step: waits (applying nothing) and gives up when the job never ran.
      const waiting = await runChat({ vars: { ...stack.vars, DATABASE_URL: url.toString() }, baseUrl: stack.baseUrl }, ["migrate", "--wait", "1"]);
      expect(waiting.code).toBe(1);
      expect(waiting.stderr).toContain("migrations still pending after 1 s");
      const out = await chatJson(["migrate"], { DATABASE_URL: url.toString() });
      for (const s of ["accounts", "messaging", "scheduler"]) expect(out.applied[s].length, s).toBeGreaterThan(0);
      const again = await chatJson(["migrate"], { DATABASE_URL: url.toString() });
      for (const names of Object.values(again.applied)) expect(names).toEqual([]);
      expect(await chatJson(["migrate", "--wait", "5"], { DATABASE_URL: url.toString() })).toEqual({ pending: {} });
    } finally {
      const admin = new URL(stack.env.databaseUrl);
      admin.pathname = "/postgres";
      const client = new pg.Client({ connectionString: admin.toString() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await client.end();
    }
  });
});

describe("pnpm chat org/user create", () => {
  it("creates an organization whose owner can use the API", async () => {
    const org = await newOrg();
    expect(org).toMatchObject({ realm_id: expect.any(Number), owner: { user_id: expect.any(Number), email: `boss@${org.domain}` } });
    const me = await apiClient(stack.baseUrl, org.owner.email, org.owner.api_key).get("/users/me");
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ user_id: org.owner.user_id, role: 100, is_owner: true });
  });

  it("creates users of every role and a bot owned by a user", async () => {
    const org = await newOrg();
    for (const [role, num] of [["admin", 200], ["moderator", 300], ["member", 400], ["guest", 600], ["owner", 100]] as const) {
      const u = await chatJson(["user", "create", "--org", String(org.realm_id), "--email", `${role}@${org.domain}`, "--name", `A ${role}`, "--role", role]);
      expect(u).toMatchObject({ email: `${role}@${org.domain}`, role: num });
      const me = await apiClient(stack.baseUrl, u.email, u.api_key).get("/users/me");
      expect(me.body).toMatchObject({ user_id: u.user_id, role: num, full_name: `A ${role}` });
    }
    const bot = await chatJson(["user", "create", "--org", String(org.realm_id), "--bot", "--owner", `member@${org.domain}`, "--email", `helper-bot@${org.domain}`, "--name", "Helper"]);
    const seen = await apiClient(stack.baseUrl, org.owner.email, org.owner.api_key).get(`/users/${bot.user_id}`);
    expect(seen.status).toBe(200);
    expect(seen.body.user).toMatchObject({ is_bot: true, bot_type: 1, full_name: "Helper" });
    const member = await apiClient(stack.baseUrl, org.owner.email, org.owner.api_key).get("/users");
    const memberId = member.body.members.find((m: { email: string }) => m.email === `member@${org.domain}`).user_id;
    expect(seen.body.user.bot_owner_id).toBe(memberId);
  });

  it("refuses bad input with a one-line error and exit code 1", async () => {
    const org = await newOrg();
    const badRole = await runChat(stack, ["user", "create", "--org", String(org.realm_id), "--email", `x@${org.domain}`, "--name", "X", "--role", "king"]);
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toContain('unknown role "king"');
    const botWithoutOwner = await runChat(stack, ["user", "create", "--org", String(org.realm_id), "--bot", "--email", `b-bot@${org.domain}`, "--name", "B"]);
    expect(botWithoutOwner.code).toBe(1);
    expect(botWithoutOwner.stderr).toContain("--bot needs --owner");
    const missing = await runChat(stack, ["org", "create", "--name", "No owner"]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("--owner-email");
  });

  it("names the service it cannot reach", async () => {
    const port = await freePort();
    const res = await runChat({ vars: { ...stack.vars, ACCOUNTS_URL: `http://127.0.0.1:${port}` }, baseUrl: stack.baseUrl }, ["api-key", "reset", "--org", "1", "--email", "a@b.example.com"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`accounts at http://127.0.0.1:${port} did not answer`);
    expect(res.stdout).toBe("");
  });
});

describe("pnpm chat api-key reset", () => {
  it("issues a new key and the old one stops working at once", async () => {
    const org = await newOrg();
    const oldKey = org.owner.api_key;
    expect((await apiClient(stack.baseUrl, org.owner.email, oldKey).get("/users/me")).status).toBe(200);
    const reset = await chatJson(["api-key", "reset", "--org", String(org.realm_id), "--email", org.owner.email]);
    expect(reset.api_key).not.toBe(oldKey);
    expect((await apiClient(stack.baseUrl, org.owner.email, reset.api_key).get("/users/me")).status).toBe(200);
    // The gateway may have cached the old key; the reset's domain event must drop it within a second.
    const deadline = Date.now() + 1500;
    let status = 200;
    while (Date.now() < deadline && status === 200) {
      status = (await apiClient(stack.baseUrl, org.owner.email, oldKey).get("/users/me")).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(401);
  });
});

describe("pnpm chat user billing-admin", () => {
  it("grants and takes away the billing role, which clients see on the user", async () => {
    const org = await newOrg();
    const owner = apiClient(stack.baseUrl, org.owner.email, org.owner.api_key);
    const granted = await chatJson(["user", "billing-admin", "--org", String(org.realm_id), "--user", org.owner.email]);
    expect(granted).toEqual({ user_id: org.owner.user_id, email: org.owner.email, is_billing_admin: true });
    expect((await owner.get("/users/me")).body).toMatchObject({ is_billing_admin: true });
    const removed = await chatJson(["user", "billing-admin", "--org", String(org.realm_id), "--user", String(org.owner.user_id), "--remove"]);
    expect(removed).toMatchObject({ is_billing_admin: false });
    expect((await owner.get("/users/me")).body).toMatchObject({ is_billing_admin: false });
  });
});

describe("pnpm chat user can-create-users", () => {
  it("lets an administrator create accounts through POST /users, and takes it away again", async () => {
    const org = await newOrg();
    const owner = apiClient(stack.baseUrl, org.owner.email, org.owner.api_key);
    const create = (n: number) => owner.post("/users", { email: `made${n}@${org.domain}`, password: "a-long-password", full_name: `Made ${n}` });
    const refused = await create(1);
    expect([refused.status, refused.body.msg]).toEqual([400, "User not authorized to create users"]);
    const granted = await chatJson(["user", "can-create-users", "--org", String(org.realm_id), "--user", org.owner.email]);
    expect(granted).toEqual({ user_id: org.owner.user_id, email: org.owner.email, can_create_users: true });
    const made = await create(2);
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({ result: "success", user_id: expect.any(Number) });
    await chatJson(["user", "can-create-users", "--org", String(org.realm_id), "--user", String(org.owner.user_id), "--remove"]);
    expect((await create(3)).body.msg).toBe("User not authorized to create users");
  });
});

describe("pnpm chat channel create", () => {
  it("creates public and invite-only channels through the gateway or as the owner internally", async () => {
    const org = await newOrg();
    const member = await chatJson(["user", "create", "--org", String(org.realm_id), "--email", `m@${org.domain}`, "--name", "Em"]);
    const viaGateway = await chatJson([
      "channel", "create", "--org", String(org.realm_id), "--name", "announcements", "--as", org.owner.email, "--api-key", org.owner.api_key, "--members", member.email,
    ]);
    const internal = await chatJson(["channel", "create", "--org", String(org.realm_id), "--name", "secret plans", "--as", org.owner.email, "--private", "--members", String(member.user_id)]);
    expect(viaGateway).toEqual({ stream_id: expect.any(Number), name: "announcements" });
    expect(internal).toEqual({ stream_id: expect.any(Number), name: "secret plans" });
    const subs = await apiClient(stack.baseUrl, member.email, member.api_key).get("/users/me/subscriptions");
    expect(subs.status).toBe(200);
    const byId = new Map((subs.body.subscriptions as Array<{ stream_id: number; name: string; invite_only: boolean }>).map((s) => [s.stream_id, s]));
    expect(byId.get(viaGateway.stream_id)).toMatchObject({ name: "announcements", invite_only: false });
    expect(byId.get(internal.stream_id)).toMatchObject({ name: "secret plans", invite_only: true });
  });
});

describe("pnpm chat org export", () => {
  it("writes the organization's export, with its messages, to a file; an unknown organization is an error", async () => {
    const org = await newOrg();
    const owner = apiClient(stack.baseUrl, org.owner.email, org.owner.api_key);
    const made = await owner.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "exported" }]) });
    expect(made.status).toBe(200);
    expect((await owner.post("/messages", { type: "stream", to: "exported", topic: "cli", content: "kept by the export" })).status).toBe(200);

    const dir = await mkdtemp(path.join(os.tmpdir(), "cli-export-"));
    try {
      const file = path.join(dir, "org.tar.gz");
      const out = await chatJson(["org", "export", "--org", String(org.realm_id), "--out", file]);
      expect(out).toEqual({ file, bytes: (await stat(file)).size });
      const text = gunzipSync(await readFile(file)).toString("utf8");
      expect(text).toContain("realm.json");
      expect(text).toContain("kept by the export");

      // To standard output (a pod's read-only file system), the same archive; the summary on stderr.
      const piped = await runChat(stack, ["org", "export", "--org", String(org.realm_id), "--out", "-"]);
      expect(piped.code, piped.stderr).toBe(0);
      expect(piped.stderr).toContain(`organization ${org.realm_id} exported`);
      expect(piped.stdout.length).toBeGreaterThan(0);

      // The file is not overwritten, and an organization that does not exist leaves none behind.
      const again = await runChat(stack, ["org", "export", "--org", String(org.realm_id), "--out", file]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("exists already");
      const missing = path.join(dir, "missing.tar.gz");
      const unknown = await runChat(stack, ["org", "export", "--org", "999999", "--out", missing]);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^error: messaging: Invalid organization/m);
      await expect(stat(missing)).rejects.toThrow();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("pnpm chat mail test", () => {
  it("sends a mail at once through the configured SMTP server, and says why when it cannot", async () => {
    const catcher = await startMailCatcher();
    try {
      const out = await chatJson(["mail", "test", "--to", "ops@example.com"], { ...catcher.env, NOREPLY_EMAIL_ADDRESS: "chat@example.com" });
      expect(out).toEqual({ sent: true, to: "ops@example.com", host: "127.0.0.1", port: catcher.port });
      const mail = await catcher.waitFor("ops@example.com");
      expect(mail).toMatchObject({ from: "chat@example.com", subject: "Test mail from your team chat server" });

      catcher.failNext(1, 550);
      const refused = await runChat({ vars: { ...stack.vars, ...catcher.env }, baseUrl: stack.baseUrl }, ["mail", "test", "--to", "ops@example.com"]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^error: mail not sent: .*550/m);
    } finally {
      await catcher.close();
    }
    const unset = await runChat(stack, ["mail", "test", "--to", "ops@example.com"]);
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain("error: mail not sent: EMAIL_HOST is not set");
    const closed = await runChat({ vars: { ...stack.vars, EMAIL_HOST: "127.0.0.1", EMAIL_PORT: String(await freePort()), EMAIL_USE_TLS: "false" }, baseUrl: stack.baseUrl }, ["mail", "test", "--to", "ops@example.com"]);
    expect(closed.code).toBe(1);
    expect(closed.stderr).toMatch(/error: mail not sent: .*ECONNREFUSED/);
  });
});
