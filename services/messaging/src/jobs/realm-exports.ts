import { z } from "zod";
import { makeNextExport } from "../actions/realm-export-archive";
import type { AppDeps } from "../deps";
import type { FileStorage } from "../storage";

/**
 * Makes the organizations' data exports (actions/realm-export-archive.ts) in the background, one
 * at a time per process: a new export in this process starts at once, the others' at the next look.
 */
export const realmExportConfigShape = {
  /** How often each messaging process looks for exports to make (a new one here starts at once). */
  EXPORT_POLL_SECONDS: z.coerce.number().int().min(1).default(30),
  /** An export's claim lapses when its process has not renewed it for this long. */
  EXPORT_LEASE_SECONDS: z.coerce.number().int().min(5).default(300),
};
export type RealmExportConfig = z.infer<z.ZodObject<typeof realmExportConfigShape>>;

export function loadRealmExportConfig(env: Record<string, string | undefined> = process.env): RealmExportConfig {
  return z.object(realmExportConfigShape).parse(env);
}

export interface RealmExportJob {
  /** Looks for work now (a new export was asked for in this process). */
  kick(): void;
  stop(): Promise<void>;
}

export function startRealmExportJob(deps: AppDeps, storage: FileStorage, config: RealmExportConfig): RealmExportJob {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  // Stopping hands an export being made back to the others rather than waiting for it.
  const stopping = new AbortController();
  const drain = async () => {
    do {
      again = false;
      while (!stopped && (await makeNextExport(deps, storage, config, stopping.signal))) {
        /* one export after another */
      }
    } while (again && !stopped);
  };
  const kick = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = drain()
      .catch((err) => deps.log.warn({ err: (err as Error).message }, "realm export: pass failed; will retry"))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(kick, config.EXPORT_POLL_SECONDS * 1000);
  timer.unref();
  kick();
  return {
    kick,
    async stop() {
      stopped = true;
      stopping.abort();
      clearInterval(timer);
      await running;
    },
  };
}
