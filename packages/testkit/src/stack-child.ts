/**
 * Preloaded (`node --import`) into every service process a test stack spawns. The stack keeps
 * the write end of the child's stdin; when the owning test process dies without calling
 * `stop()` (a crashed or killed vitest worker), stdin reaches end-of-file and the service shuts
 * itself down instead of lingering as an orphan that holds ports and CPU.
 */
process.stdin.on("end", () => process.kill(process.pid, "SIGTERM"));
process.stdin.on("error", () => process.kill(process.pid, "SIGTERM"));
process.stdin.resume();
