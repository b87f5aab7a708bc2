import { gunzipSync } from "node:zlib";
import { extract } from "tar-stream";

/** The files of a data export's archive (`.tar.gz` bytes), by name. */
export async function untar(bytes: Buffer): Promise<Map<string, Buffer>> {
  const entries = new Map<string, Buffer>();
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on("entry", (header, stream, next) => {
      const parts: Buffer[] = [];
      stream.on("data", (d) => parts.push(d as Buffer));
      stream.on("end", () => {
        entries.set(header.name, Buffer.concat(parts));
        next();
      });
    });
    ex.on("finish", resolve);
    ex.on("error", reject);
  });
  ex.end(gunzipSync(bytes));
  await done;
  return entries;
}
