import type { FastifyRequest } from "fastify";
import { ApiError } from "@chat/platform";

/** A request body the gateway must see (credentials, a method override), failing past `maxBytes`. */
export function readBody(req: FastifyRequest, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.raw.off("data", onData);
      req.raw.off("end", onEnd);
      req.raw.off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      // Not destroyed: the rest is read and discarded, so the client gets its 413 instead of a
      // reset connection (or a stalled upload on a kept-alive one).
      stop();
      req.raw.resume();
      reject(new ApiError("REQUEST_TOO_LARGE", "Request body too large", { status: 413 }));
    };
    const onEnd = () => (stop(), resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    const onError = (err: Error) => (stop(), reject(err));
    req.raw.on("data", onData);
    req.raw.on("end", onEnd);
    req.raw.on("error", onError);
  });
}
