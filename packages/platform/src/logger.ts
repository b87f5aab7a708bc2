import pino, { type Logger } from "pino";

export type { Logger };

/** JSON logs on stdout (or `destination`, which tests use to read what was logged). */
export function createLogger(service: string, level: string, destination?: pino.DestinationStream): Logger {
  const options = { level, base: { service }, timestamp: pino.stdTimeFunctions.isoTime };
  return destination ? pino(options, destination) : pino(options);
}

/** A logger whose lines land in `lines` as parsed objects: for tests that assert what was logged. */
export function createMemoryLogger(service = "test", level = "debug"): { log: Logger; lines: Array<Record<string, any>> } {
  const lines: Array<Record<string, any>> = [];
  const log = createLogger(service, level, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}
