import type { Logger } from "@chat/platform";

export interface PeriodicJob {
  stop(): Promise<void>;
}

/**
 * Runs `pass` now and every `everySeconds`, never two at once in this process (a timer that
 * fires while a pass runs is skipped); a failed pass is logged as `<name>: pass failed` and the
 * next one tries again. stop() waits for the pass in progress.
 */
export function startPeriodicJob(name: string, everySeconds: number, log: Logger, pass: () => Promise<void>): PeriodicJob {
  let running: Promise<void> | null = null;
  let stopped = false;
  const kick = () => {
    if (stopped || running) return;
    running = pass()
      .catch((err) => log.warn({ err: (err as Error).message }, `${name}: pass failed; will retry`))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(kick, everySeconds * 1000);
  timer.unref();
  kick();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
