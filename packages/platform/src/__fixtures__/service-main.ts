/**
 * A minimal service entry for the graceful-shutdown test: listens on a free port, prints it,
 * then shuts down through runService on SIGTERM.
 */
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { route, success } from "@chat/contracts";
import { baseConfigShape, loadConfigOrExit, portShape } from "../config";
import { runService } from "../lifecycle";
import { createLogger } from "../logger";
import { createServer, registerRoute } from "../server";

const config = loadConfigOrExit({ ...baseConfigShape, ...portShape("accounts") });
const log = createLogger("fixture", "silent");
const app = createServer({ name: "fixture", logger: log, internalToken: config.INTERNAL_TOKEN });
const Slow = route({ method: "GET", path: "/slow", service: "accounts", auth: "none", params: {}, response: success({ done: z.boolean() }) });
registerRoute(app, Slow, async () => {
  await new Promise((r) => setTimeout(r, 600));
  return { done: true };
});
await runService({
  app,
  host: "127.0.0.1",
  port: config.PORT,
  log,
  graceSeconds: config.SHUTDOWN_GRACE_SECONDS,
  stop: [
    async () => void process.stdout.write("stop:consumers\n"),
    async () => {
      throw new Error("a failing step does not block the next");
    },
    async () => void process.stdout.write("stop:relay\n"),
  ],
});
process.stdout.write(`listening:${(app.server.address() as AddressInfo).port}\n`);
