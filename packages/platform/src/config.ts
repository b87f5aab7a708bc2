import { parse as parseConnectionString } from "pg-connection-string";
import { z } from "zod";

/** Default ports: the gateway is the only public one. */
export const SERVICE_PORTS = { gateway: 9991, accounts: 9992, messaging: 9993, events: 9994, scheduler: 9995 } as const;

/** A boolean environment variable: `true/false/1/0/yes/no`. */
export const envBool = (def: boolean) =>
  z
    .enum(["true", "false", "1", "0", "yes", "no"])
    .default(def ? "true" : "false")
    .transform((v) => v === "true" || v === "1" || v === "yes");

const DEV_INTERNAL_TOKEN = "dev-internal-token-change-me";

/**
 * A PostgreSQL connection URL as libpq and pg read it, naming a database: besides the plain
 * form, a Unix socket directory as the host (percent-encoded) or in a `host` parameter, with
 * or without a user before an empty host (`postgres://chat@/chat?host=/var/run/postgresql`,
 * which is not a WHATWG URL).
 */
const postgresUrl = z.string().refine((v) => {
  if (!/^postgres(ql)?:\/\//.test(v)) return false;
  try {
    return Boolean(parseConnectionString(v).database);
  } catch {
    return false;
  }
}, "expected a postgres:// or postgresql:// connection URL naming a database");

/** Variables every service reads. Service configs extend this shape. */
export const baseConfigShape = {
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  HOST: z.string().default("127.0.0.1"),
  DATABASE_URL: postgresUrl.default("postgres://postgres@127.0.0.1:5432/chat"),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /**
   * PostgreSQL session settings for every connection, as libpq reads them (`-c name=value ...`,
   * e.g. `-c statement_timeout=5s`); the service adds its own schema's search path.
   */
  PGOPTIONS: z.string().optional(),
  REDIS_URL: z.string().url().default("redis://127.0.0.1:6379"),
  /** Prefix of every Redis key, so several deployments or test runs can share a server. */
  REDIS_PREFIX: z.string().default("chat:"),
  AMQP_URL: z.string().url().default("amqp://guest:guest@127.0.0.1:5672"),
  AMQP_EXCHANGE: z.string().default("chat.domain"),
  /** Prefix of every queue name this deployment declares. */
  AMQP_QUEUE_PREFIX: z.string().default("chat."),
  /**
   * Relays publish a run of consecutive events with the same routing key as one broker message
   * (a JSON array) instead of one message each: less work for RabbitMQ and the consumers. On by
   * default since every supported release reads such messages; set `false` while upgrading from
   * a release older than the one that taught consumers to (docs/operating.md, upgrades).
   */
  AMQP_PUBLISH_BATCHES: envBool(true),
  /**
   * When events were committed while the outbox relay waited for RabbitMQ to confirm a batch, it
   * waits this many milliseconds more before reading the next one, so that a busy outbox goes out
   * in fewer, larger batches (each costs a read and a mark in PostgreSQL, a confirmed publish, and
   * a consume and a Redis round trip in the events service). A quiet outbox publishes at once; 0
   * never waits.
   */
  OUTBOX_LINGER_MS: z.coerce.number().int().min(0).max(1000).default(5),
  /** Delete queues unused for this long (RabbitMQ `x-expires`); tests set it, production leaves it unset. */
  AMQP_QUEUE_EXPIRES_MS: z.coerce.number().int().positive().optional(),
  INTERNAL_TOKEN: z.string().min(16).default(DEV_INTERNAL_TOKEN),
  ACCOUNTS_URL: z.string().url().default(`http://127.0.0.1:${SERVICE_PORTS.accounts}`),
  MESSAGING_URL: z.string().url().default(`http://127.0.0.1:${SERVICE_PORTS.messaging}`),
  EVENTS_URL: z.string().url().default(`http://127.0.0.1:${SERVICE_PORTS.events}`),
  SCHEDULER_URL: z.string().url().default(`http://127.0.0.1:${SERVICE_PORTS.scheduler}`),
  /** Check every success body against its contract (tests); off in production. */
  VALIDATE_RESPONSES: envBool(false),
  /** Seconds to finish in-flight requests after SIGTERM. */
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).default(10),
};

export type ConfigShape = Record<string, z.ZodType>;

export class ConfigError extends Error {}

/**
 * Parses the environment against a zod shape. A wrong value throws a ConfigError naming each
 * bad variable; `main.ts` prints it and exits, so a misconfigured pod fails at start.
 */
export function loadConfig<S extends ConfigShape>(
  shape: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<z.ZodObject<S>> {
  const result = z.object(shape).safeParse(
    Object.fromEntries(Object.keys(shape).map((k) => [k, env[k] === "" ? undefined : env[k]])),
  );
  if (!result.success) {
    const lines = result.error.issues.map((i) => {
      const name = String(i.path[0]);
      return `  ${name}: ${i.message} (got ${shown(name, env[name])})`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  return result.data as z.infer<z.ZodObject<S>>;
}

/** The offending value for the message, without leaking secrets into logs. */
function shown(name: string, value: string | undefined): string {
  if (value === undefined || value === "") return "nothing";
  if (/TOKEN|SECRET|PASSWORD|KEY/i.test(name)) return `a value of ${value.length} characters`;
  return JSON.stringify(value.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@"));
}

/** For `main.ts`: a wrong variable prints which one and why, then exits with status 1. */
export function loadConfigOrExit<S extends ConfigShape>(
  shape: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<z.ZodObject<S>> {
  try {
    return loadConfig(shape, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(err.message + "\n");
    process.exit(1);
  }
}

/** `PORT` for one service, defaulting to its well-known port (gateway 9991, accounts 9992, ...). */
export const portShape = (service: keyof typeof SERVICE_PORTS) => ({
  PORT: z.coerce.number().int().min(0).max(65535).default(SERVICE_PORTS[service]),
});

export type BaseConfig = z.infer<z.ZodObject<typeof baseConfigShape>>;

