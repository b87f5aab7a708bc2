import { describe, expect, it } from "vitest";
import { z } from "zod";
import { baseConfigShape, ConfigError, envBool, loadConfig, portShape } from "./config";

describe("loadConfig", () => {
  it("gives the documented defaults", () => {
    const c = loadConfig({ ...baseConfigShape, ...portShape("gateway") }, {});
    expect(c.DATABASE_URL).toBe("postgres://postgres@127.0.0.1:5432/chat");
    expect(c.REDIS_URL).toBe("redis://127.0.0.1:6379");
    expect(c.AMQP_URL).toBe("amqp://guest:guest@127.0.0.1:5672");
    expect(c.PORT).toBe(9991);
    expect(c.ACCOUNTS_URL).toBe("http://127.0.0.1:9992");
    expect(c.MESSAGING_URL).toBe("http://127.0.0.1:9993");
    expect(c.EVENTS_URL).toBe("http://127.0.0.1:9994");
    expect(c.SCHEDULER_URL).toBe("http://127.0.0.1:9995");
    expect(c.VALIDATE_RESPONSES).toBe(false);
    expect(loadConfig(portShape("scheduler"), {}).PORT).toBe(9995);
  });

  it("reads and coerces values; an empty variable counts as unset", () => {
    const c = loadConfig({ ...baseConfigShape, ...portShape("accounts") }, { PORT: "4000", DATABASE_POOL_SIZE: "3", VALIDATE_RESPONSES: "yes", REDIS_URL: "" });
    expect(c).toMatchObject({ PORT: 4000, DATABASE_POOL_SIZE: 3, VALIDATE_RESPONSES: true, REDIS_URL: "redis://127.0.0.1:6379" });
  });

  it("takes DATABASE_URL in the forms pg and libpq read, socket directories included, and nothing else", () => {
    const db = (v: string) => loadConfig({ DATABASE_URL: baseConfigShape.DATABASE_URL }, { DATABASE_URL: v });
    for (const ok of [
      "postgresql://chat:secret@db.internal:6432/chat?sslmode=verify-full",
      "postgres://chat@/chat?host=/var/run/postgresql",
      "postgres:///chat?host=/var/run/postgresql&user=chat",
      "postgresql://chat@%2Fvar%2Frun%2Fpostgresql:5432/chat",
    ]) {
      expect(db(ok).DATABASE_URL).toBe(ok);
    }
    for (const bad of ["http://db.internal/chat", "postgres://db.internal:5432", "db.internal/chat", "/var/run/postgresql chat"]) {
      expect(() => db(bad), bad).toThrow(/DATABASE_URL: expected a postgres:\/\/ or postgresql:\/\/ connection URL naming a database/);
    }
  });

  it("names every wrong variable and what was wrong", () => {
    const run = () => loadConfig({ ...baseConfigShape, ...portShape("events") }, { PORT: "http", DATABASE_URL: "not a url", LOG_LEVEL: "loud" });
    expect(run).toThrow(ConfigError);
    const msg = (() => {
      try {
        run();
      } catch (e) {
        return (e as Error).message;
      }
    })()!;
    expect(msg).toMatch(/^Invalid configuration:/);
    expect(msg).toMatch(/PORT: .*\(got "http"\)/);
    expect(msg).toMatch(/DATABASE_URL: .*\(got "not a url"\)/);
    expect(msg).toMatch(/LOG_LEVEL: .*\(got "loud"\)/);
  });

  it("never echoes secrets or URL passwords", () => {
    const shape = { INTERNAL_TOKEN: baseConfigShape.INTERNAL_TOKEN, AMQP_URL: z.string().url().refine(() => false, "rejected") };
    try {
      loadConfig(shape, { INTERNAL_TOKEN: "tiny", AMQP_URL: "amqp://user:hunter2@host:5672" });
      throw new Error("should fail");
    } catch (e) {
      const msg = (e as Error).message;
      expect(msg).toContain("INTERNAL_TOKEN");
      expect(msg).toContain("a value of 4 characters");
      expect(msg).not.toContain("tiny");
      expect(msg).toContain("amqp://user:***@host:5672");
      expect(msg).not.toContain("hunter2");
    }
  });

  it("envBool accepts the usual spellings only", () => {
    const shape = { F: envBool(false) };
    expect(loadConfig(shape, { F: "1" }).F).toBe(true);
    expect(loadConfig(shape, { F: "no" }).F).toBe(false);
    expect(loadConfig(shape, {}).F).toBe(false);
    expect(() => loadConfig(shape, { F: "maybe" })).toThrow(/F:/);
  });
});
