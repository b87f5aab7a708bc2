import { apiClient, type ApiClient, type ApiResponse, type DemoOutput, type DemoUser } from "@chat/testkit";

/**
 * One of each object an endpoint can name by id, created in a demo organization: some belong to
 * `member` (another user's private objects, for the isolation checks), some to the organization.
 */
export interface OrgObjects {
  realmId: number;
  publicStreamId: number;
  privateStreamId: number;
  /** A channel message by member in the public channel. */
  messageId: number;
  /** A direct message from member to member2: private to the two of them. */
  directMessageId: number;
  /** A message in the private channel (sent by the owner). */
  privateChannelMessageId: number;
  draftId: number;
  scheduledMessageId: number;
  userGroupId: number;
  attachmentId: number;
  /** `/user_uploads/...` path of member's upload, as returned by POST /user_uploads. */
  uploadUrl: string;
  inviteId: number;
  linkifierId: number;
  profileFieldId: number;
  /** A bot owned by member. */
  botId: number;
  pushToken: string;
  /** An event queue of member. */
  queueId: string;
  memberId: number;
}

export const sendMultipart = async (baseUrl: string, user: DemoUser, path: string, filename: string, data: Buffer | string, contentType = "text/plain") => {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(typeof data === "string" ? Buffer.from(data) : data)], { type: contentType }), filename);
  const res = await fetch(`${baseUrl}/api/v1${path}`, {
    method: "POST",
    headers: { authorization: "Basic " + Buffer.from(`${user.email}:${user.api_key}`).toString("base64") },
    body: form,
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* keep text */
  }
  return { status: res.status, body, headers: Object.fromEntries(res.headers.entries()) } as ApiResponse;
};

function ok(res: ApiResponse, what: string): any {
  if (res.status !== 200 || res.body?.result !== "success") throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}`;

/** Creates the objects through the public API, the way clients would. */
export async function createOrgObjects(demo: DemoOutput, orgIndex: 0 | 1): Promise<OrgObjects> {
  const org = demo.orgs[orgIndex];
  const users = org.users as Record<string, DemoUser>;
  const owner = apiClient(demo.base_url, users.owner.email, users.owner.api_key);
  const member = apiClient(demo.base_url, users.member.email, users.member.api_key);
  const publicStreamId = org.channels.public.stream_id;
  let privateStreamId: number;
  if ("private" in org.channels) {
    privateStreamId = (org.channels as { private: { stream_id: number } }).private.stream_id;
  } else {
    // The second organization has no private channel: make one (owner only).
    const name = unique("secret-");
    ok(await owner.post("/users/me/subscriptions", { subscriptions: [{ name }], invite_only: true }), "create private channel");
    privateStreamId = ok(await owner.get("/get_stream_id", { stream: name }), "get_stream_id").stream_id;
  }
  const other = users.member2 ?? users.owner;

  const messageId = ok(await member.post("/messages", { type: "stream", to: publicStreamId, topic: "objects", content: "a channel message" }), "send").id;
  const directMessageId = ok(await member.post("/messages", { type: "direct", to: [other.user_id], content: "a private word" }), "dm").id;
  const privateChannelMessageId = ok(
    await owner.post("/messages", { type: "stream", to: privateStreamId, topic: "secret", content: "private channel content" }),
    "private channel send",
  ).id;
  const draftId = ok(await member.post("/drafts", { drafts: [{ type: "stream", to: [publicStreamId], topic: "d", content: "draft text" }] }), "draft").ids[0];
  const scheduledMessageId = ok(
    await member.post("/scheduled_messages", {
      type: "stream",
      to: publicStreamId,
      topic: "later",
      content: "scheduled text",
      scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 30 * 24 * 3600,
    }),
    "schedule",
  ).scheduled_message_id;

  const groupName = unique("group-");
  ok(await owner.post("/user_groups/create", { name: groupName, description: "d", members: [users.member.user_id] }), "group");
  const groups = ok(await owner.get("/user_groups"), "groups").user_groups as Array<{ id: number; name: string }>;
  const userGroupId = groups.find((g) => g.name === groupName)!.id;

  const upload = ok(await sendMultipart(demo.base_url, users.member, "/user_uploads", "notes.txt", "secret file body"), "upload");
  const attachments = ok(await member.get("/attachments"), "attachments").attachments as Array<{ id: number; path_id: string }>;
  const attachmentId = attachments[attachments.length - 1].id;

  ok(await owner.post("/invites", { invitee_emails: `${unique("invitee-")}@example.com`, stream_ids: [] }), "invite");
  const invites = ok(await owner.get("/invites"), "invites").invites as Array<{ id: number }>;
  const inviteId = invites[invites.length - 1].id;

  const linkifierId = ok(await owner.post("/realm/filters", { pattern: `#(?P<id>[0-9]+)${unique("x")}`, url_template: "https://example.com/{id}" }), "linkifier").id;
  const profileFieldId = ok(await owner.post("/realm/profile_fields", { name: unique("field "), hint: "", field_type: 1 }), "profile field").id;
  const botId = ok(await member.post("/bots", { full_name: "Member's bot", short_name: unique("mbot") }), "bot").user_id;
  const pushToken = unique("token").padEnd(40, "a");
  ok(await member.post("/users/me/android_gcm_reg_id", { token: pushToken }), "push token");
  const queueId = ok(await member.post("/register", { event_types: ["message"] }), "register").queue_id;

  return {
    realmId: org.id,
    publicStreamId,
    privateStreamId,
    messageId,
    directMessageId,
    privateChannelMessageId,
    draftId,
    scheduledMessageId,
    userGroupId,
    attachmentId,
    uploadUrl: upload.url,
    inviteId,
    linkifierId,
    profileFieldId,
    botId,
    pushToken,
    queueId,
    memberId: users.member.user_id,
  };
}

export type { ApiClient };
