import { domainEvents } from "@chat/contracts";
import { AccountsClient, MessagingClient } from "../src/clients/services";
import { buildApp } from "../src/app";
import type { SchedulerDeps } from "../src/deps";
import { DeliveryLoop } from "../src/workers/delivery-loop";
import { createLogger, createPool, InternalClient, ManualClock, ROLES, type Identity, type Pool } from "@chat/platform";
import { createTestEnv, serviceClient, type TestEnv } from "@chat/testkit";
import { startPeer, type Peer } from "./peers";

export const T0 = new Date("2030-01-01T12:00:00Z");
export const ts = (d: Date) => Math.floor(d.getTime() / 1000);

export interface Harness {
  env: TestEnv;
  pool: Pool;
  clock: ManualClock;
  peer: Peer;
  deps: SchedulerDeps;
  call: ReturnType<typeof serviceClient>;
  loop(opts?: ConstructorParameters<typeof DeliveryLoop>[1]): DeliveryLoop;
  /** Domain events written so far, each checked against its contract. */
  events(type?: string): Promise<Array<{ type: string; payload: any }>>;
  close(): Promise<void>;
}

export const REALM = 7;
export const alice: Identity = { userId: 11, realmId: REALM, role: ROLES.member, isBot: false, email: "alice@example.com", client: "website" };
export const bob: Identity = { userId: 12, realmId: REALM, role: ROLES.member, isBot: false, email: "bob@example.com", client: "website" };
export const BOT_ID = 5;
export const CHANNEL = 100;

export async function startHarness(): Promise<Harness> {
  const env = await createTestEnv();
  await env.migrate("scheduler");
  const token = env.vars.INTERNAL_TOKEN;
  const peer = await startPeer(token);
  for (const u of [alice, bob]) {
    peer.users.set(u.userId, { user_id: u.userId, realm_id: REALM, email: u.email, role: u.role, is_active: true, is_bot: false });
  }
  peer.users.set(BOT_ID, { user_id: BOT_ID, realm_id: REALM, email: "notification-bot@example.invalid", role: ROLES.member, is_active: true, is_bot: true });
  peer.notificationBotId = BOT_ID;
  peer.streams.add(CHANNEL);
  const pool = createPool(env.databaseUrl, "scheduler", 8);
  const clock = new ManualClock(T0);
  const log = createLogger("scheduler", "silent");
  const deps: SchedulerDeps = {
    pool,
    clock,
    log,
    messaging: new MessagingClient(new InternalClient(peer.url, token)),
    accounts: new AccountsClient(new InternalClient(peer.url, token)),
  };
  const app = buildApp({ config: { INTERNAL_TOKEN: token, VALIDATE_RESPONSES: true }, deps });
  await app.ready();
  return {
    env,
    pool,
    clock,
    peer,
    deps,
    call: serviceClient(app, token),
    loop: (opts = { intervalMs: 50, concurrency: 2 }) => new DeliveryLoop(deps, opts),
    async events(type) {
      const { rows } = await pool.query("SELECT type, payload FROM outbox ORDER BY seq");
      for (const r of rows) {
        const schema = domainEvents[r.type];
        if (!schema) throw new Error(`no contract for ${r.type}`);
        schema.parse(r.payload);
      }
      return rows.filter((r) => !type || r.type === type);
    },
    async close() {
      await app.close();
      await peer.close();
      await pool.end();
      await env.cleanup();
    },
  };
}
