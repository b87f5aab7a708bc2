import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { domainEvents } from "@chat/contracts";
import { createLogger, createPool, createServer, identityHeaders, ManualClock, ROLES, withTx, type Identity, type Pool } from "@chat/platform";
import { createTestEnv, serviceClient, type TestEnv } from "@chat/testkit";
import type { FastifyInstance } from "fastify";
import { attachmentHooks, FileReaper } from "../src/actions/attachments";
import type { AppDeps } from "../src/deps";
import { attachmentRoutes, type AttachmentsModule } from "../src/routes/attachments";
import { LocalDirectoryStorage, type FileStorage } from "../src/storage";

export const T0 = new Date("2030-01-01T12:00:00Z");
export const REALM = 3;
export const OTHER_REALM = 4;

const who = (userId: number, realmId = REALM, role: number = ROLES.member): Identity => ({
  userId,
  realmId,
  role: role as Identity["role"],
  isBot: false,
  email: `u${userId}@example.com`,
  client: "test",
});
export const owner = who(21);
export const friend = who(22);
export const stranger = who(23);
export const guest = who(24, REALM, ROLES.guest);
export const outsider = who(31, OTHER_REALM);

/**
 * Messaging with only the attachment routes and hooks mounted, over a temporary upload
 * directory. Messages are written with plain SQL into messaging's own tables.
 */
export interface AttachmentsHarness {
  env: TestEnv;
  pool: Pool;
  clock: ManualClock;
  app: FastifyInstance;
  dir: string;
  mod: AttachmentsModule;
  hooks: ReturnType<typeof attachmentHooks>;
  call: ReturnType<typeof serviceClient>;
  upload(as: Identity, files: Array<{ name: string; body: string | Buffer; type?: string; field?: string }>, fields?: Record<string, string>): Promise<{ status: number; body: any }>;
  download(as: Identity, url: string, headers?: Record<string, string>): Promise<{ status: number; body: Buffer; headers: Record<string, unknown> }>;
  events(type?: string): Promise<Array<{ type: string; payload: any }>>;
  /** A channel message (public unless `invite_only`) received by `recipients`; runs the send hook. */
  sendToChannel(sender: Identity, content: string, opts?: { inviteOnly?: boolean; recipients?: number[]; subscribers?: number[]; historyPublic?: boolean }): Promise<number>;
  sendDirect(sender: Identity, to: number[], content: string): Promise<number>;
  deleteMessages(ids: number[]): Promise<void>;
  close(): Promise<void>;
}

export async function startAttachmentsHarness(opts: { maxUploadBytes?: number; storage?: (dir: string) => FileStorage } = {}): Promise<AttachmentsHarness> {
  const env = await createTestEnv();
  await env.migrate("messaging");
  const pool = createPool(env.databaseUrl, "messaging", 6);
  const log = createLogger("messaging", "silent");
  const clock = new ManualClock(T0);
  const dir = await mkdtemp(path.join(os.tmpdir(), "uploads-"));
  const storage = opts.storage?.(dir) ?? new LocalDirectoryStorage(dir);
  const mod: AttachmentsModule = { storage, maxUploadBytes: opts.maxUploadBytes ?? 100 * 1024 * 1024, reaper: new FileReaper({ pool, log, storage }) };
  const hooks = attachmentHooks(mod.reaper);
  const token = env.vars.INTERNAL_TOKEN;
  const app = createServer({ name: "messaging", logger: log, internalToken: token, validateResponses: true });
  // The internal token signs temporary URLs.
  const deps = { pool, log, clock, hooks, config: { INTERNAL_TOKEN: token } } as unknown as AppDeps;
  attachmentRoutes(mod)(app, deps);
  await app.ready();

  for (const u of [owner, friend, stranger, guest, outsider]) {
    await pool.query(
      `INSERT INTO users (user_id, realm_id, email, delivery_email, full_name, role, is_active, is_bot, date_joined)
       VALUES ($1, $2, $3, $3, $3, $4, true, false, '2024-01-01') ON CONFLICT DO NOTHING`,
      [u.userId, u.realmId, u.email, u.role],
    );
  }

  let streamSeq = 0;
  async function insertMessage(tx: any, sender: Identity, recipientId: number, streamId: number | null, content: string, recipients: number[]) {
    const { rows } = await tx.query(
      `INSERT INTO messages (realm_id, sender_id, recipient_id, stream_id, topic, content, rendered_content, sending_client, date_sent, search_tsv)
       VALUES ($1, $2, $3, $4, 't', $5, $5, 'test', $6, to_tsvector('english', $5)) RETURNING id`,
      [sender.realmId, sender.userId, recipientId, streamId, content, clock.now()],
    );
    const id = Number(rows[0].id);
    for (const u of new Set([sender.userId, ...recipients])) {
      await tx.query("INSERT INTO usermessages (realm_id, user_id, message_id, flags) VALUES ($1, $2, $3, 0)", [sender.realmId, u, id]);
    }
    await hooks.onMessageSent(tx, { id, realmId: sender.realmId, senderId: sender.userId, content, renderedContent: content, streamId, dateSent: clock.now() });
    return id;
  }

  return {
    env,
    pool,
    clock,
    app,
    dir,
    mod,
    hooks,
    call: serviceClient(app, token),
    async upload(as, files, fields = {}) {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.append(k, v);
      for (const f of files) form.append(f.field ?? "file", new Blob([typeof f.body === "string" ? f.body : new Uint8Array(f.body)], { type: f.type ?? "text/plain" }), f.name);
      const req = new Request("http://local/", { method: "POST", body: form });
      const payload = Buffer.from(await req.arrayBuffer());
      const res = await app.inject({
        method: "POST",
        url: "/api/v1/user_uploads",
        headers: { ...identityHeaders(as, token), "content-type": req.headers.get("content-type")! },
        payload,
      });
      return { status: res.statusCode, body: res.json() };
    },
    async download(as, url, headers = {}) {
      const res = await app.inject({ method: "GET", url: `/api/v1${url}`, headers: { ...identityHeaders(as, token), ...headers } });
      return { status: res.statusCode, body: res.rawPayload, headers: res.headers };
    },
    async events(type) {
      const { rows } = await pool.query("SELECT type, payload FROM outbox ORDER BY seq");
      for (const r of rows) domainEvents[r.type].parse(r.payload);
      return rows.filter((r) => !type || r.type === type);
    },
    async sendToChannel(sender, content, o = {}) {
      return withTx(pool, async (tx) => {
        const { rows } = await tx.query(
          `INSERT INTO streams (realm_id, name, invite_only, history_public_to_subscribers, can_remove_subscribers_group)
           VALUES ($1, $2, $3, $4, 1) RETURNING id`,
          [sender.realmId, `channel ${++streamSeq}`, o.inviteOnly ?? false, o.historyPublic ?? true],
        );
        const streamId = Number(rows[0].id);
        const rec = await tx.query("INSERT INTO recipients (realm_id, stream_id) VALUES ($1, $2) RETURNING id", [sender.realmId, streamId]);
        for (const u of o.subscribers ?? []) {
          await tx.query("INSERT INTO subscriptions (realm_id, user_id, stream_id, color) VALUES ($1, $2, $3, '#fff')", [sender.realmId, u, streamId]);
        }
        return insertMessage(tx, sender, Number(rec.rows[0].id), streamId, content, o.recipients ?? []);
      });
    },
    async sendDirect(sender, to, content) {
      return withTx(pool, async (tx) => {
        const key = [...new Set([sender.userId, ...to])].sort((a, b) => a - b).join(",");
        const rec = await tx.query(
          `INSERT INTO recipients (realm_id, user_ids_key) VALUES ($1, $2)
           ON CONFLICT (realm_id, user_ids_key) WHERE user_ids_key IS NOT NULL DO UPDATE SET user_ids_key = EXCLUDED.user_ids_key RETURNING id`,
          [sender.realmId, key],
        );
        return insertMessage(tx, sender, Number(rec.rows[0].id), null, content, to);
      });
    },
    async deleteMessages(ids) {
      await withTx(pool, async (tx) => {
        await hooks.onMessagesDeleted(tx, REALM, ids);
        await tx.query("DELETE FROM messages WHERE id = ANY($1::bigint[])", [ids]);
      });
    },
    async close() {
      mod.reaper.stop();
      await app.close();
      await pool.end();
      await env.cleanup();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
