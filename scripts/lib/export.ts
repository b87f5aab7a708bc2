import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { INTERNAL_HEADERS } from "@chat/platform";
import { CliError } from "./clients";
import type { CliConfig } from "./config";

/**
 * An organization's public data export, as its administrators get it from POST /export/realm,
 * streamed from messaging into `file` (`-`: standard output, for a container whose file system is
 * read-only) without the API's limits (weekly count, size). A failure midway leaves no partial file.
 */
export async function exportOrg(cfg: CliConfig, realmId: number, file: string): Promise<number> {
  const url = `${cfg.MESSAGING_URL}/api/v1/internal/realms/${realmId}/export`;
  let res: Response;
  try {
    res = await fetch(url, { headers: { [INTERNAL_HEADERS.token]: cfg.INTERNAL_TOKEN } });
  } catch {
    throw new CliError(`messaging at ${cfg.MESSAGING_URL} did not answer (is the server running? try \`pnpm start\`)`);
  }
  if (!res.ok || !res.body) {
    const body = (await res.json().catch(() => ({}))) as { msg?: string; code?: string };
    throw new CliError(`messaging: ${body.msg ?? `HTTP ${res.status}`}${body.code ? ` (${body.code})` : ""}`);
  }
  let bytes = 0;
  const counted = Readable.fromWeb(res.body as never).on("data", (chunk: Buffer) => (bytes += chunk.length));
  try {
    await pipeline(counted, file === "-" ? process.stdout : createWriteStream(file, { flags: "wx" }));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new CliError(`${file} exists already`);
    if (file !== "-") await rm(file, { force: true });
    throw new CliError(`the export was cut short (${(err as Error).message}); see messaging's log`);
  }
  return bytes;
}
