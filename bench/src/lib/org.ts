import { randomBytes } from "node:crypto";
import type { Pool } from "undici";
import { identityHeaders, INTERNAL_HEADERS, ROLES, type Identity } from "@chat/platform";
import { basicAuth, Caller, createPool, expectOk } from "./http";
import { brokerPids, cpuWindow } from "./procs";
import { mapLimit } from "./stats";
import type { Target } from "./target";

/**
 * A benchmark organization, created directly through accounts' internal routes (fast, no
 * invitations), with channels made through the public API as a client would.
 */

export interface BenchUser {
  userId: number;
  email: string;
  apiKey: string;
  role: number;
}

export interface BenchOrg {
  realmId: number;
  stringId: string;
  owner: BenchUser;
  users: BenchUser[];
}

/** Shared pools: setup traffic never mixes with measured traffic's sockets. */
export class Setup {
  readonly accountsPool: Pool;
  readonly gatewayPool: Pool;
  readonly messagingPool: Pool;
  readonly eventsPool: Pool;
  private readonly internal: Caller;

  constructor(readonly target: Target) {
    this.accountsPool = createPool(target.urls.accounts, { connections: 8 });
    this.gatewayPool = createPool(target.gatewayUrl, { connections: 8 });
    this.messagingPool = createPool(target.urls.messaging, { connections: 8 });
    this.eventsPool = createPool(target.urls.events, { connections: 8 });
    this.internal = new Caller(this.accountsPool, { [INTERNAL_HEADERS.token]: target.vars.INTERNAL_TOKEN });
  }

  private shared: { size: number; org: Promise<BenchOrg> } | null = null;

  /**
   * One large organization shared by scenarios that only need many users (register, idle):
   * creating a thousand users takes a while on a loaded machine, so it is done once.
   */
  sharedOrg(size: number): Promise<BenchOrg> {
    if (!this.shared || this.shared.size < size) this.shared = { size, org: this.createOrg(`shared${size}`, size, 8) };
    return this.shared.org;
  }

  async createOrg(label: string, userCount: number, concurrency = 4): Promise<BenchOrg> {
    const stringId = `bench${label.replace(/[^a-z0-9]/gi, "").toLowerCase()}${randomBytes(3).toString("hex")}`;
    const created = expectOk(
      await this.internal.post("/internal/realms", {
        name: `Bench ${label}`,
        string_id: stringId,
        owner_email: `owner@${stringId}.example.com`,
        owner_full_name: "Bench Owner",
      }),
      "POST /internal/realms",
    ) as { realm_id: number; owner: { user_id: number; email: string; api_key: string } };
    const owner: BenchUser = { userId: created.owner.user_id, email: created.owner.email, apiKey: created.owner.api_key, role: ROLES.owner };
    const users = await mapLimit(Array.from({ length: userCount }, (_, i) => i), concurrency, async (i) => {
      const u = expectOk(
        await this.internal.post("/internal/users", {
          realm_id: created.realm_id,
          email: `user${i}@${stringId}.example.com`,
          full_name: `Bench User ${i}`,
          role: ROLES.member,
        }),
        "POST /internal/users",
      ) as { user_id: number; email: string; api_key: string };
      return { userId: u.user_id, email: u.email, apiKey: u.api_key, role: ROLES.member };
    });
    return { realmId: created.realm_id, stringId, owner, users };
  }

  /** A caller through the gateway with the user's API key (the real client path). */
  gateway(user: BenchUser, pool: Pool = this.gatewayPool): Caller {
    return new Caller(pool, { authorization: basicAuth(user.email, user.apiKey), "user-agent": "ChatBench/1.0" });
  }

  /** A caller straight to one service with the internal token and the user's identity. */
  direct(org: BenchOrg, user: BenchUser, pool: Pool): Caller {
    return new Caller(pool, identityHeaders(identityOf(org, user), this.target.vars.INTERNAL_TOKEN));
  }

  /**
   * Creates channels (as the owner) and subscribes `subscriberIds` to each, in chunks so that
   * one request never carries a huge principals list.
   */
  async createChannels(org: BenchOrg, names: string[], subscriberIds: number[]): Promise<Map<string, number>> {
    const owner = this.gateway(org.owner);
    const chunk = 500;
    for (let i = 0; i < Math.max(1, subscriberIds.length); i += chunk) {
      const principals = [org.owner.userId, ...subscriberIds.slice(i, i + chunk)];
      for (let j = 0; j < names.length; j += 20) {
        expectOk(
          await owner.post("/users/me/subscriptions", {
            subscriptions: names.slice(j, j + 20).map((name) => ({ name })),
            principals,
          }),
          "POST /users/me/subscriptions",
        );
      }
    }
    const ids = new Map<string, number>();
    for (const name of names) {
      const found = expectOk(await owner.get("/get_stream_id", { stream: name }), "GET /get_stream_id") as { stream_id: number };
      ids.set(name, found.stream_id);
    }
    return ids;
  }

  /**
   * CPU of every service, of the PostgreSQL backends of the stack's database and of Redis and
   * RabbitMQ when they run on this machine, over a window.
   */
  cpuWindow() {
    const { DATABASE_URL, REDIS_URL, AMQP_URL } = this.target.vars;
    const db = decodeURIComponent(new URL(DATABASE_URL).pathname.slice(1));
    const local = (url: string) => /^(127\.|localhost$|\[::1\]$)/.test(new URL(url).hostname);
    const found = brokerPids();
    const brokers = { redis: local(REDIS_URL) ? found.redis : null, rabbitmq: local(AMQP_URL) ? found.rabbitmq : null };
    return cpuWindow(this.target.pids(), db || undefined, brokers);
  }

  async close(): Promise<void> {
    await Promise.all([this.accountsPool.close(), this.gatewayPool.close(), this.messagingPool.close(), this.eventsPool.close()]);
  }
}

export function identityOf(org: BenchOrg, user: BenchUser): Identity {
  return { userId: user.userId, realmId: org.realmId, role: user.role as Identity["role"], isBot: false, email: user.email, client: "ChatBench" };
}
