import type { ByteRange } from "../storage";

/**
 * The part of a `size`-byte file a download asks for with `Range` (RFC 9110, one range of
 * bytes): null for the whole file (no header, an `If-Range` we cannot check, several ranges or
 * one we do not understand, which the RFC lets a server ignore), "unsatisfiable" when it starts
 * past the end.
 */
export function requestedRange(header: string | undefined, ifRange: string | undefined, size: number): ByteRange | "unsatisfiable" | null {
  // Without validators (ETag, Last-Modified) no If-Range can match: send the whole file.
  if (header === undefined || ifRange !== undefined) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  if (m[2] !== "" && Number(m[2]) < start) return null;
  if (start >= size) return "unsatisfiable";
  return { start, end: m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1) };
}
