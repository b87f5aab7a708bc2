import { afterEach, describe, expect, it } from "vitest";
import { resolveInfra, START_COMMANDS, stopContainers, unreachable } from "./infra";

const saved = { ...process.env };
afterEach(() => {
  for (const k of ["TESTKIT_INFRA", "REDIS_URL", "TEST_DATABASE_URL", "DATABASE_URL", "AMQP_URL"]) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe("resolveInfra", () => {
  it("uses the local servers when they answer", async () => {
    const urls = await resolveInfra();
    expect(await unreachable(urls)).toEqual([]);
  });

  it("takes the server from DATABASE_URL, connecting to its maintenance database", async () => {
    delete process.env.TEST_DATABASE_URL;
    process.env.DATABASE_URL = "postgres://postgres@127.0.0.1:5432/chat";
    expect((await resolveInfra()).databaseUrl).toBe("postgres://postgres@127.0.0.1:5432/postgres");
  });

  it("local mode names what does not answer and how to start it", async () => {
    process.env.TESTKIT_INFRA = "local";
    process.env.REDIS_URL = "redis://127.0.0.1:1";
    await expect(resolveInfra()).rejects.toThrow(`Not reachable: redis.\nStart them with:\n  redis: ${START_COMMANDS.redis}`);
  });

  it("auto mode falls back to containers, and says so when there is no container runtime", async () => {
    process.env.AMQP_URL = "amqp://guest:guest@127.0.0.1:1";
    try {
      const urls = await resolveInfra();
      // A container runtime exists on this machine: RabbitMQ came from a container.
      expect(urls.amqpUrl).not.toBe("amqp://guest:guest@127.0.0.1:1");
      await stopContainers();
    } catch (err) {
      expect((err as Error).message).toContain("Not reachable: rabbitmq.");
      expect((err as Error).message).toContain("No container runtime");
    }
  }, 60_000);
});
