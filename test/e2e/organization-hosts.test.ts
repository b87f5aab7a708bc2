import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, browse, mailLink, runDemo, startMailCatcher, startStack, type DemoOutput, type DemoUser, type MailCatcher, type Stack } from "@chat/testkit";

/**
 * Per-organization hosts (ORGANIZATION_SUBDOMAINS): each organization is reached at
 * `<string_id>.chat.test`, which names it in server_settings and serves only its accounts, while
 * `chat.test` (and any other name, such as the address the test connects to) serves all of
 * them. The names do not resolve here: requests go to the gateway's address with a Host header.
 */

let stack: Stack;
let demo: DemoOutput;
let catcher: MailCatcher;

beforeAll(async () => {
  catcher = await startMailCatcher();
  stack = await startStack({ env: { ...catcher.env, ORGANIZATION_SUBDOMAINS: "true", EXTERNAL_URL: "http://chat.test" } });
  demo = await runDemo(stack);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await catcher?.close();
});

/** An organization's own URL, which the demo reports only with ORGANIZATION_SUBDOMAINS. */
const urlOf = (org: { url?: string }): string => {
  if (!org.url) throw new Error("the demo reported no URL of the organization's own");
  return org.url;
};
const hostOf = (org: { url?: string }) => new URL(urlOf(org)).host;
const onHost = (host: string, user?: DemoUser) => {
  const client = apiClient(stack.baseUrl, user?.email, user?.api_key);
  const headers = { host };
  return {
    get: (path: string, params: Record<string, unknown> = {}) => client.get(path, params, { headers }),
    post: (path: string, params: Record<string, unknown> = {}) => client.post(path, params, { headers }),
    patch: (path: string, params: Record<string, unknown> = {}) => client.patch(path, params, { headers }),
  };
};

describe("organization URLs", () => {
  it("each organization's URL is its string_id below EXTERNAL_URL's host, as the demo reports it", () => {
    expect(demo.base_url).toBe("http://chat.test");
    const [one, two] = demo.orgs.map(urlOf);
    expect(one).toMatch(/^http:\/\/demo-[a-z0-9-]+\.chat\.test$/);
    expect(two).toMatch(/^http:\/\/demo-[a-z0-9-]+\.chat\.test$/);
    expect(one).not.toBe(two);
  });

  it("register's realm_url is the organization's own, whichever host the client used", async () => {
    const owner = demo.orgs[0].users.owner;
    for (const host of [hostOf(demo.orgs[0]), "chat.test"]) {
      const res = await onHost(host, owner).post("/register", { fetch_event_types: JSON.stringify(["realm"]) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ realm_url: urlOf(demo.orgs[0]), realm_uri: urlOf(demo.orgs[0]) });
    }
  });

  it("a reusable invitation link is on the organization's host", async () => {
    const res = await onHost(hostOf(demo.orgs[0]), demo.orgs[0].users.owner).post("/invites/multiuse", { invite_as: 400, stream_ids: "[]" });
    expect(res.status).toBe(200);
    expect(res.body.invite_link).toMatch(new RegExp(`^${urlOf(demo.orgs[0]).replace(/\./g, "\\.")}/join/[a-z0-9]+/$`));
  });

  it("the notice of a moved message links to it on the organization's host", async () => {
    const owner = onHost(hostOf(demo.orgs[0]), demo.orgs[0].users.owner);
    const channel = demo.orgs[0].channels.public.name;
    const first = await owner.post("/messages", { type: "stream", to: channel, topic: "hosts", content: "one" });
    await owner.post("/messages", { type: "stream", to: channel, topic: "hosts", content: "two" });
    const moved = await owner.patch(`/messages/${first.body.id}`, { topic: "hosts moved", propagate_mode: "change_one", send_notification_to_new_thread: true, send_notification_to_old_thread: false });
    expect(moved.status).toBe(200);
    const narrow = JSON.stringify([{ operator: "channel", operand: channel }, { operator: "topic", operand: "hosts moved" }]);
    const page = await owner.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow, apply_markdown: false });
    const notice = page.body.messages.find((m: { content: string }) => m.content.includes("was moved here"));
    expect(notice?.content).toContain(`[A message](${urlOf(demo.orgs[0])}/#narrow/`);
  });
});

describe("GET /server_settings by host", () => {
  it("names the organization on its own host, and none on the deployment's host when there are several", async () => {
    for (const org of demo.orgs) {
      const res = await onHost(hostOf(org)).get("/server_settings");
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ realm_name: org.name, realm_url: urlOf(org), realm_uri: urlOf(org), realm_description: expect.any(String) });
      expect(res.body.realm_icon).toEqual(expect.any(String));
    }
    for (const host of ["chat.test", "CHAT.test:443", new URL(stack.baseUrl).host]) {
      const root = await onHost(host).get("/server_settings");
      expect(root.status).toBe(200);
      expect(root.body.realm_url).toBe("http://chat.test");
      expect(root.body).not.toHaveProperty("realm_name");
    }
  });

  it("the host is matched without case or port", async () => {
    const host = hostOf(demo.orgs[1]).toUpperCase() + ":8443";
    const res = await onHost(host).get("/server_settings");
    expect(res.body.realm_name).toBe(demo.orgs[1].name);
  });

  it("a subdomain no organization has answers 404 NONEXISTENT_SUBDOMAIN", async () => {
    const res = await onHost("nobody-here.chat.test").get("/server_settings");
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ result: "error", code: "NONEXISTENT_SUBDOMAIN", msg: "Invalid subdomain" });
  });

  it("a client cannot name a subdomain itself through the internal header", async () => {
    const res = await apiClient(stack.baseUrl).get("/server_settings", {}, { headers: { "x-chat-subdomain": "nobody-here" } });
    expect(res.status).toBe(200);
    expect(res.body.realm_url).toBe("http://chat.test");
  });
});

describe("credentials by host", () => {
  it("an API key works on its organization's host and the deployment's, and not on another organization's", async () => {
    const owner = demo.orgs[0].users.owner;
    const own = await onHost(hostOf(demo.orgs[0]), owner).get("/users/me");
    expect(own.status).toBe(200);
    expect(own.body.email).toBe(owner.email);
    expect((await onHost("chat.test", owner).get("/users/me")).status).toBe(200);
    // The check above is now cached; the other host is still refused.
    for (const host of [hostOf(demo.orgs[1]), "nobody-here.chat.test"]) {
      const other = await onHost(host, owner).get("/users/me");
      expect(other.status).toBe(401);
      expect(other.body).toMatchObject({ result: "error", code: "UNAUTHORIZED", msg: "Account is not associated with this subdomain" });
      expect(other.headers["www-authenticate"]).toBe('Basic realm="zulip"');
    }
  });

  it("POST /fetch_api_key logs in only the host's organization's accounts", async () => {
    const admin = onHost(hostOf(demo.orgs[0]), demo.orgs[0].users.owner);
    const email = `hosts-${Date.now()}@example.com`;
    const created = await admin.post("/users", { email, password: "correct horse battery", full_name: "Hal Host" });
    expect(created.status).toBe(200);
    const login = { username: email, password: "correct horse battery" };

    const own = await onHost(hostOf(demo.orgs[0])).post("/fetch_api_key", login);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ email, user_id: created.body.user_id, api_key: expect.any(String) });
    expect((await onHost("chat.test").post("/fetch_api_key", login)).body.api_key).toBe(own.body.api_key);

    const other = await onHost(hostOf(demo.orgs[1])).post("/fetch_api_key", login);
    expect(other.status).toBe(401);
    expect(other.body).toMatchObject({ code: "AUTHENTICATION_FAILED", msg: "Your username or password is incorrect" });

    const nowhere = await onHost("nobody-here.chat.test").post("/fetch_api_key", login);
    expect(nowhere.status).toBe(404);
    expect(nowhere.body).toMatchObject({ code: "NONEXISTENT_SUBDOMAIN", msg: "Invalid subdomain" });
  });
});

describe("mailed links", () => {
  it("an invitation's link is on its organization's host, and another organization's host does not know it", async () => {
    const email = `host-invitee-${Date.now()}@example.com`;
    const invited = await onHost(hostOf(demo.orgs[0]), demo.orgs[0].users.admin).post("/invites", { invitee_emails: email, stream_ids: "[]", invite_as: 400 });
    expect(invited.status, JSON.stringify(invited.body)).toBe(200);
    const link = mailLink((await catcher.waitFor(email)).text, "/accounts/do_confirm/");
    expect(link.host).toBe(hostOf(demo.orgs[0]));
    expect((await browse(stack.baseUrl, link.path, { host: hostOf(demo.orgs[1]) })).status).toBe(404);
    const refused = await browse(stack.baseUrl, link.path, { host: hostOf(demo.orgs[1]), form: { full_name: "Wrong Host", password: "a long password" } });
    expect(refused.status).toBe(404);
    expect((await browse(stack.baseUrl, link.path, { host: link.host })).status).toBe(200);
    // The deployment's own host serves every organization's links.
    const done = await browse(stack.baseUrl, link.path, { host: "chat.test", form: { full_name: "Right Host", password: "a long password" } });
    expect(done.status, done.text).toBe(200);
  });

  it("a reusable link's page answers only on its organization's host (and the deployment's)", async () => {
    const made = await onHost(hostOf(demo.orgs[0]), demo.orgs[0].users.owner).post("/invites/multiuse", { invite_as: 400, stream_ids: "[]" });
    expect(made.status).toBe(200);
    const path = new URL(made.body.invite_link).pathname;
    expect((await browse(stack.baseUrl, path, { host: hostOf(demo.orgs[1]) })).status).toBe(404);
    expect((await browse(stack.baseUrl, path, { host: hostOf(demo.orgs[0]) })).status).toBe(200);
    expect((await browse(stack.baseUrl, path, { host: "chat.test" })).status).toBe(200);
  });
});
