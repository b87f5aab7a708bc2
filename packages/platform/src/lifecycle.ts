import type { FastifyInstance } from "fastify";
import { ConfigError } from "./config";
import type { Logger } from "./logger";
import { markShuttingDown } from "./server";

/**
 * Runs a service's `main`. Whatever stops it from starting ends the process with status 1: a
 * wrong variable as the one message that names it (a misconfigured pod fails at start, without
 * a stack trace), anything else as the error itself.
 */
export function runMain(main: () => Promise<void>): void {
  main().catch((err) => {
    if (err instanceof ConfigError) process.stderr.write(err.message + "\n");
    else console.error(err);
    process.exit(1);
  });
}

/**
 * Listens, then on SIGTERM/SIGINT: stops accepting, lets in-flight requests finish (fastify's
 * close), runs the service's stop steps in order, and exits. A hard deadline bounds it all.
 */
export async function runService(opts: {
  app: FastifyInstance;
  host: string;
  port: number;
  log: Logger;
  graceSeconds: number;
  /** Called after the HTTP server stopped accepting, in order (consumers, relay, pools). */
  stop: Array<() => Promise<unknown>>;
}): Promise<void> {
  await opts.app.listen({ host: opts.host, port: opts.port });
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    opts.log.info({ signal }, "shutting down");
    const deadline = setTimeout(() => {
      opts.log.error("graceful shutdown took too long; exiting");
      process.exit(1);
    }, opts.graceSeconds * 1000);
    deadline.unref();
    markShuttingDown(opts.app);
    // Keep-alive sockets that go idle after their last response would hold close() open until
    // their timeout; drop them as soon as they are idle.
    const reaper = setInterval(() => opts.app.server.closeIdleConnections?.(), 100);
    reaper.unref();
    try {
      await opts.app.close();
      clearInterval(reaper);
      for (const step of opts.stop) await step().catch((err) => opts.log.warn({ err }, "stop step failed"));
    } finally {
      clearTimeout(deadline);
      process.exit(0);
    }
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}
