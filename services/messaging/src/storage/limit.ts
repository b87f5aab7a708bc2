import { Transform } from "node:stream";
import { FileTooLargeError } from "./types";

/** Passes bytes through and fails the pipeline as soon as more than `maxBytes` went by. */
export function byteLimit(maxBytes: number): Transform & { bytes: number } {
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      t.bytes += chunk.length;
      if (t.bytes > maxBytes) return done(new FileTooLargeError(maxBytes));
      done(null, chunk);
    },
  }) as Transform & { bytes: number };
  t.bytes = 0;
  return t;
}
