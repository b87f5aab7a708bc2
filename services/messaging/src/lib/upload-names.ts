/*
 * An upload's names and type: the name it is shown by, the cleaned last segment of its path, the
 * type it is stored with, and its URL. Pure functions of what the client sent.
 */

/** Percent-escapes decoded as UTF-8; a `%` that starts no escape stays as it is. */
function percentDecode(name: string): string {
  return name.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => Buffer.from(run.replace(/%/g, ""), "hex").toString("utf8"));
}

/** Control, format and separator characters other than the plain space: nothing a name should show. */
const UNPRINTABLE = /[\p{C}\p{Zl}\p{Zp}]|(?! )\p{Zs}/gu;

/** Longest name kept, in characters; a longer one loses the end of its stem, not its extension. */
const MAX_NAME_LENGTH = 255;

/**
 * The name an upload is known by (`filename` in the answer, `name` in attachment objects): the
 * name the client gave, directory part dropped (the multipart parser does that), unprintable
 * characters dropped, percent-escapes decoded (some clients send names escaped), cut to 255
 * characters. Null when the part names no file (no name, or `.` or `..`): as in Zulip, such a
 * part is not an upload at all.
 */
export function uploadedFileName(given: string | undefined): string | null {
  const bare = (given ?? "").replace(UNPRINTABLE, "");
  if (bare === "" || bare === "." || bare === "..") return null;
  const chars = [...percentDecode(bare).replace(UNPRINTABLE, "")];
  if (chars.length === 0) return "uploaded-file";
  if (chars.length <= MAX_NAME_LENGTH) return chars.join("");
  const dot = chars.lastIndexOf(".");
  const ext = dot > 0 ? chars.slice(dot, dot + MAX_NAME_LENGTH) : [];
  return [...chars.slice(0, MAX_NAME_LENGTH - ext.length), ...ext].join("");
}

/**
 * Types by extension, for a part that declared none: the multipart parser then reports
 * `text/plain`, and a picture sent that way (Python's requests, hence Zulip's own client, does
 * so) would be served as text. Zulip guesses from the name in that case too.
 */
const TYPE_BY_EXTENSION: Record<string, string> = {
  png: "image/png",
  apng: "image/apng",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  bmp: "image/bmp",
  svg: "image/svg+xml",
  ico: "image/vnd.microsoft.icon",
  tif: "image/tiff",
  tiff: "image/tiff",
  pdf: "application/pdf",
  zip: "application/zip",
  gz: "application/gzip",
  json: "application/json",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  aac: "audio/aac",
  flac: "audio/flac",
  wav: "audio/wav",
  ogg: "audio/ogg",
  oga: "audio/ogg",
  mp4: "video/mp4",
  m4v: "video/mp4",
  webm: "video/webm",
  mov: "video/quicktime",
  ogv: "video/ogg",
  html: "text/html",
  htm: "text/html",
  csv: "text/csv",
};

/**
 * The type to store: the part's own, or a guess from the name where the part said none, as Zulip
 * guesses. The multipart parser reports a part without a type as `text/plain`, which a client may
 * also have declared; so `text/plain` gives way only to a media type (an image, audio, video or a
 * PDF, what clients show inline), never to one that would change how a declared text file is
 * served, and a part of unknown extension stays `text/plain` (Zulip: application/octet-stream).
 */
export function uploadContentType(declared: string | undefined, fileName: string): string {
  const type = (declared ?? "").trim().toLowerCase();
  if (type !== "" && type !== "text/plain") return type;
  const ext = /\.([A-Za-z0-9]+)$/.exec(fileName)?.[1].toLowerCase();
  const guess = ext ? TYPE_BY_EXTENSION[ext] : undefined;
  if (type === "") return guess ?? "application/octet-stream";
  return guess && /^(image|audio|video)\/|^application\/pdf$/.test(guess) ? guess : type;
}

/** Zulip's file name cleaning for the URL: letters, digits, `_`, `.`, `-`; runs of spaces and dashes become one dash. */
export function sanitizeFileName(name: string): string {
  let v = name.normalize("NFKC").replace(/[^\p{L}\p{N}_\s.-]/gu, "").trim();
  v = v.replace(/[-\s]+/g, "-");
  v = lastBytes(v, MAX_SEGMENT_BYTES); // the end keeps the extension of an absurdly long name
  return v === "" || v === "." || v === ".." ? "uploaded-file" : v;
}

/**
 * Longest last path segment, in UTF-8 bytes: file systems refuse names over 255 bytes, which
 * 200 characters of most non-Latin scripts exceed.
 */
const MAX_SEGMENT_BYTES = 200;

/** The longest end of `v`, in whole characters, that fits in `max` UTF-8 bytes. */
function lastBytes(v: string, max: number): string {
  if (Buffer.byteLength(v) <= max) return v;
  const chars = [...v];
  let bytes = 0;
  let start = chars.length;
  while (start > 0 && bytes + Buffer.byteLength(chars[start - 1]) <= max) bytes += Buffer.byteLength(chars[--start]);
  return chars.slice(start).join("");
}

/** The URL of an upload: path id with the file name escaped for URLs. */
export function uploadUrl(pathId: string): string {
  const parts = pathId.split("/");
  parts[parts.length - 1] = encodeURIComponent(parts[parts.length - 1]);
  return `/user_uploads/${parts.join("/")}`;
}
