import { writeSync } from "node:fs";
import net from "node:net";

/**
 * Preloaded (`node --import`) into every service process a test stack spawns. The stack keeps
 * the write end of the child's stdin; when the owning test process dies without calling
 * `stop()` (a crashed or killed vitest worker), stdin reaches end-of-file and the service shuts
 * itself down instead of lingering as an orphan that holds ports and CPU.
 */
process.stdin.on("end", () => process.kill(process.pid, "SIGTERM"));
process.stdin.on("error", () => process.kill(process.pid, "SIGTERM"));
process.stdin.resume();

/**
 * Each port a server of this process starts listening on, one line each on the file descriptor
 * the stack names: the stack waits for its service's port there before it trusts `/ready`.
 */
const reportFd = Number(process.env.TESTKIT_LISTEN_FD);
if (Number.isInteger(reportFd) && reportFd > 2) {
  const emit = net.Server.prototype.emit as (this: net.Server, event: string | symbol, ...args: unknown[]) => boolean;
  net.Server.prototype.emit = function (this: net.Server, event: string | symbol, ...args: unknown[]) {
    if (event === "listening") {
      const address = this.address();
      if (address && typeof address === "object") {
        try {
          writeSync(reportFd, `${address.port}\n`);
        } catch {
          /* the stack is gone; stdin's end stops this process */
        }
      }
    }
    return emit.call(this, event, ...args);
  } as typeof net.Server.prototype.emit;
}
