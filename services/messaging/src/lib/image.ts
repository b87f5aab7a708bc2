import { crc32, deflateSync } from "node:zlib";

/**
 * Just enough of the image formats custom emoji come in to tell which format some bytes are,
 * whether they animate, and to draw an animated GIF's first frame as a PNG (the still image
 * Zulip serves for animated emoji). No pixel is decoded otherwise.
 */

/** The formats Zulip takes for custom emoji: ones it can thumbnail and lets browsers show inline. */
export const EMOJI_IMAGE_TYPES = ["image/png", "image/gif", "image/jpeg", "image/webp", "image/avif"] as const;
export type EmojiImageType = (typeof EMOJI_IMAGE_TYPES)[number];

export const IMAGE_EXTENSIONS: Record<EmojiImageType, string> = {
  "image/png": ".png",
  "image/gif": ".gif",
  "image/jpeg": ".jpg",
  "image/webp": ".webp",
  "image/avif": ".avif",
};

export interface SniffedImage {
  type: EmojiImageType;
  /** More than one frame (an animated GIF, APNG, WebP or AVIF sequence). */
  animated: boolean;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The format of the bytes by their signature, or null when they are none of EMOJI_IMAGE_TYPES. */
export function sniffImage(buf: Buffer): SniffedImage | null {
  if (buf.length >= 8 && buf.subarray(0, 8).equals(PNG_SIGNATURE)) {
    return { type: "image/png", animated: pngChunks(buf).some((c) => c.type === "acTL") };
  }
  const head = buf.subarray(0, 6).toString("latin1");
  if (head === "GIF87a" || head === "GIF89a") {
    const gif = parseGif(buf);
    return gif ? { type: "image/gif", animated: gif.frames.length > 1 } : null;
  }
  if (buf.length >= 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return { type: "image/jpeg", animated: false };
  if (buf.length >= 16 && buf.toString("latin1", 0, 4) === "RIFF" && buf.toString("latin1", 8, 12) === "WEBP") {
    const kind = buf.toString("latin1", 12, 16);
    return { type: "image/webp", animated: kind === "VP8X" && buf.length > 20 && (buf[20] & 0x02) !== 0 };
  }
  if (buf.length >= 12 && buf.toString("latin1", 4, 8) === "ftyp") {
    const size = Math.min(buf.readUInt32BE(0), buf.length);
    const brands = [buf.toString("latin1", 8, 12)];
    for (let i = 16; i + 4 <= size; i += 4) brands.push(buf.toString("latin1", i, i + 4));
    if (brands.includes("avis")) return { type: "image/avif", animated: true };
    if (brands.includes("avif")) return { type: "image/avif", animated: false };
  }
  return null;
}

/** Width and height where the format states them in its header (PNG, GIF), else null. */
export function imageDimensions(buf: Buffer, type: EmojiImageType): { width: number; height: number } | null {
  if (type === "image/png" && buf.length >= 24) return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
  if (type === "image/gif" && buf.length >= 10) return { width: buf.readUInt16LE(6), height: buf.readUInt16LE(8) };
  return null;
}

/**
 * A still image of an animated emoji, as a PNG: an animated GIF's first frame, or an APNG's
 * default image. Null when it cannot be made here (WebP and AVIF sequences, a broken file).
 */
export function stillImage(buf: Buffer, type: EmojiImageType): Buffer | null {
  if (type === "image/png") return apngDefaultImage(buf);
  if (type === "image/gif") return gifFirstFrame(buf);
  return null;
}

// ---------------------------------------------------------------------------------------------
// PNG

interface PngChunk {
  type: string;
  start: number;
  end: number;
}

function pngChunks(buf: Buffer): PngChunk[] {
  const out: PngChunk[] = [];
  for (let at = 8; at + 12 <= buf.length; ) {
    const length = buf.readUInt32BE(at);
    const end = at + 12 + length;
    if (end > buf.length) break;
    const type = buf.toString("latin1", at + 4, at + 8);
    out.push({ type, start: at, end });
    if (type === "IEND") break;
    at = end;
  }
  return out;
}

/** The PNG without its animation chunks: what a decoder that knows no APNG shows. */
function apngDefaultImage(buf: Buffer): Buffer | null {
  const chunks = pngChunks(buf);
  if (!chunks.some((c) => c.type === "IDAT")) return null;
  const kept = chunks.filter((c) => c.type !== "acTL" && c.type !== "fcTL" && c.type !== "fdAT").map((c) => buf.subarray(c.start, c.end));
  return Buffer.concat([PNG_SIGNATURE, ...kept]);
}

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** An 8-bit RGBA PNG of `rgba` (rows top to bottom). */
export function encodePng(width: number, height: number, rgba: Uint8Array): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    // Filter type 0 (none) before each row.
    raw.set(rgba.subarray(y * width * 4, (y + 1) * width * 4), y * (width * 4 + 1) + 1);
  }
  return Buffer.concat([PNG_SIGNATURE, pngChunk("IHDR", ihdr), pngChunk("IDAT", deflateSync(raw)), pngChunk("IEND", Buffer.alloc(0))]);
}

// ---------------------------------------------------------------------------------------------
// GIF

interface GifFrame {
  left: number;
  top: number;
  width: number;
  height: number;
  interlaced: boolean;
  palette: Buffer | null;
  transparentIndex: number | null;
  minCodeSize: number;
  data: Buffer;
}

interface Gif {
  width: number;
  height: number;
  frames: GifFrame[];
}

/** The bytes of a run of GIF sub-blocks from `at`, and where the run ends; null when cut short. */
function subBlocks(buf: Buffer, at: number): { data: Buffer[]; end: number } | null {
  const data: Buffer[] = [];
  for (;;) {
    if (at >= buf.length) return null;
    const size = buf[at];
    if (size === 0) return { data, end: at + 1 };
    if (at + 1 + size > buf.length) return null;
    data.push(buf.subarray(at + 1, at + 1 + size));
    at += 1 + size;
  }
}

function parseGif(buf: Buffer): Gif | null {
  if (buf.length < 13) return null;
  const width = buf.readUInt16LE(6);
  const height = buf.readUInt16LE(8);
  const packed = buf[10];
  let at = 13;
  let globalPalette: Buffer | null = null;
  if (packed & 0x80) {
    const size = 3 * (1 << ((packed & 7) + 1));
    globalPalette = buf.subarray(at, at + size);
    at += size;
  }
  const frames: GifFrame[] = [];
  let transparentIndex: number | null = null;
  while (at < buf.length) {
    const introducer = buf[at];
    if (introducer === 0x3b) break;
    if (introducer === 0x21) {
      const label = buf[at + 1];
      const blocks = subBlocks(buf, at + 2);
      if (!blocks) return null;
      if (label === 0xf9 && blocks.data[0]?.length >= 4) transparentIndex = blocks.data[0][0] & 1 ? blocks.data[0][3] : null;
      at = blocks.end;
    } else if (introducer === 0x2c) {
      if (at + 11 > buf.length) return null;
      const fpacked = buf[at + 9];
      let next = at + 10;
      let palette = globalPalette;
      if (fpacked & 0x80) {
        const size = 3 * (1 << ((fpacked & 7) + 1));
        palette = buf.subarray(next, next + size);
        next += size;
      }
      const minCodeSize = buf[next];
      const blocks = subBlocks(buf, next + 1);
      if (!blocks || minCodeSize < 2 || minCodeSize > 11) return null;
      frames.push({
        left: buf.readUInt16LE(at + 1),
        top: buf.readUInt16LE(at + 3),
        width: buf.readUInt16LE(at + 5),
        height: buf.readUInt16LE(at + 7),
        interlaced: (fpacked & 0x40) !== 0,
        palette,
        transparentIndex,
        minCodeSize,
        data: Buffer.concat(blocks.data),
      });
      transparentIndex = null;
      at = blocks.end;
    } else {
      return null;
    }
  }
  return frames.length > 0 ? { width, height, frames } : null;
}

/** GIF's variable-width LZW: the frame's colour indexes (a short stream leaves the rest 0). */
function lzwDecode(minCodeSize: number, data: Buffer, pixelCount: number): Uint8Array {
  const out = new Uint8Array(pixelCount);
  const clear = 1 << minCodeSize;
  const eoi = clear + 1;
  const prefix = new Int16Array(4096);
  const suffix = new Uint8Array(4096);
  const first = new Uint8Array(4096);
  for (let c = 0; c < clear; c++) suffix[c] = first[c] = c;
  const stack = new Uint8Array(4097);
  let codeSize = minCodeSize + 1;
  let next = eoi + 1;
  let prev = -1;
  let bits = 0;
  let bitCount = 0;
  let i = 0;
  let pos = 0;
  while (pos < pixelCount) {
    while (bitCount < codeSize) {
      if (i >= data.length) return out;
      bits |= data[i++] << bitCount;
      bitCount += 8;
    }
    const code = bits & ((1 << codeSize) - 1);
    bits >>>= codeSize;
    bitCount -= codeSize;
    if (code === clear) {
      codeSize = minCodeSize + 1;
      next = eoi + 1;
      prev = -1;
      continue;
    }
    if (code === eoi) break;
    if (prev === -1) {
      if (code >= clear) return out;
      out[pos++] = code;
      prev = code;
      continue;
    }
    if (code > next) return out;
    let sp = 0;
    let cur = code;
    if (code === next) {
      stack[sp++] = first[prev];
      cur = prev;
    }
    while (cur >= clear) {
      stack[sp++] = suffix[cur];
      cur = prefix[cur];
    }
    stack[sp++] = cur;
    while (sp > 0 && pos < pixelCount) out[pos++] = stack[--sp];
    if (next < 4096) {
      prefix[next] = prev;
      suffix[next] = cur;
      first[next] = first[prev];
      next++;
      if (next === 1 << codeSize && codeSize < 12) codeSize++;
    }
    prev = code;
  }
  return out;
}

/** Rows of an interlaced frame in the order they are stored. */
function interlacedRows(height: number): number[] {
  const rows: number[] = [];
  for (const [start, step] of [[0, 8], [4, 8], [2, 4], [1, 2]]) for (let y = start; y < height; y += step) rows.push(y);
  return rows;
}

/** Canvases larger than this get no still image (a 5 MiB GIF can claim a huge one). */
const MAX_STILL_PIXELS = 4096 * 4096;

function gifFirstFrame(buf: Buffer): Buffer | null {
  const gif = parseGif(buf);
  if (!gif || gif.width * gif.height === 0 || gif.width * gif.height > MAX_STILL_PIXELS) return null;
  const frame = gif.frames[0];
  if (!frame.palette || frame.width * frame.height > MAX_STILL_PIXELS) return null;
  const indexes = lzwDecode(frame.minCodeSize, frame.data, frame.width * frame.height);
  const rgba = new Uint8Array(gif.width * gif.height * 4);
  const rows = frame.interlaced ? interlacedRows(frame.height) : null;
  for (let r = 0; r < frame.height; r++) {
    const y = frame.top + (rows ? rows[r] : r);
    if (y >= gif.height) continue;
    for (let x = 0; x < frame.width; x++) {
      const cx = frame.left + x;
      if (cx >= gif.width) continue;
      const index = indexes[r * frame.width + x];
      if (index === frame.transparentIndex || index * 3 + 2 >= frame.palette.length) continue;
      const o = (y * gif.width + cx) * 4;
      rgba[o] = frame.palette[index * 3];
      rgba[o + 1] = frame.palette[index * 3 + 1];
      rgba[o + 2] = frame.palette[index * 3 + 2];
      rgba[o + 3] = 255;
    }
  }
  return encodePng(gif.width, gif.height, rgba);
}
