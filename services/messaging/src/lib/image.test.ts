import { inflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { encodePng, imageDimensions, sniffImage, stillImage } from "./image";

/** GIF LZW the simple way: a clear code before every index, so codes never grow. */
function lzw(indexes: number[], minCodeSize = 2): Buffer {
  const clear = 1 << minCodeSize;
  const size = minCodeSize + 1;
  const codes = indexes.flatMap((i) => [clear, i]).concat(clear + 1);
  const bytes: number[] = [];
  let bits = 0;
  let count = 0;
  for (const c of codes) {
    bits |= c << count;
    count += size;
    while (count >= 8) {
      bytes.push(bits & 0xff);
      bits >>>= 8;
      count -= 8;
    }
  }
  if (count > 0) bytes.push(bits & 0xff);
  const out: number[] = [minCodeSize];
  for (let i = 0; i < bytes.length; i += 255) {
    const part = bytes.slice(i, i + 255);
    out.push(part.length, ...part);
  }
  return Buffer.from([...out, 0]);
}

const le16 = (n: number) => [n & 0xff, n >> 8];

/** A GIF of `frames` (each a list of indexes into red, blue, green, white), index 3 transparent in frame one. */
function makeGif(width: number, height: number, frames: number[][], opts: { interlaced?: boolean } = {}): Buffer {
  const parts: Buffer[] = [Buffer.from("GIF89a", "latin1"), Buffer.from([...le16(width), ...le16(height), 0x81, 0, 0])];
  parts.push(Buffer.from([0xff, 0, 0, 0, 0, 0xff, 0, 0xff, 0, 0xff, 0xff, 0xff]));
  frames.forEach((indexes, n) => {
    parts.push(Buffer.from([0x21, 0xf9, 4, n === 0 ? 1 : 0, 10, 0, 3, 0]));
    parts.push(Buffer.from([0x2c, 0, 0, 0, 0, ...le16(width), ...le16(height), opts.interlaced ? 0x40 : 0]));
    parts.push(lzw(indexes));
  });
  parts.push(Buffer.from([0x3b]));
  return Buffer.concat(parts);
}

/** The RGBA pixels of a PNG encodePng wrote (filter 0 rows, one IDAT). */
function decodePng(png: Buffer): { width: number; height: number; pixels: number[][] } {
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const idatAt = png.indexOf("IDAT", 0, "latin1");
  const raw = inflateSync(png.subarray(idatAt + 4, idatAt + 4 + png.readUInt32BE(idatAt - 4)));
  const pixels: number[][] = [];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = y * (width * 4 + 1) + 1 + x * 4;
      pixels.push([...raw.subarray(o, o + 4)]);
    }
  }
  return { width, height, pixels };
}

const RED = [255, 0, 0, 255];
const BLUE = [0, 0, 255, 255];
const GREEN = [0, 255, 0, 255];
const CLEAR = [0, 0, 0, 0];

describe("sniffImage", () => {
  it("tells the accepted formats by their signature, and which animate", () => {
    expect(sniffImage(makeGif(1, 1, [[0]]))).toEqual({ type: "image/gif", animated: false });
    expect(sniffImage(makeGif(1, 1, [[0], [1]]))).toEqual({ type: "image/gif", animated: true });
    expect(sniffImage(encodePng(1, 1, new Uint8Array(4)))).toEqual({ type: "image/png", animated: false });
    expect(sniffImage(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]))).toEqual({ type: "image/jpeg", animated: false });
    const webp = (flags: number) => Buffer.concat([Buffer.from("RIFF\0\0\0\0WEBPVP8X", "latin1"), Buffer.from([10, 0, 0, 0, flags, 0, 0, 0])]);
    expect(sniffImage(webp(0))).toEqual({ type: "image/webp", animated: false });
    expect(sniffImage(webp(0x02))).toEqual({ type: "image/webp", animated: true });
    const ftyp = (brand: string) => Buffer.concat([Buffer.from([0, 0, 0, 20]), Buffer.from(`ftyp${brand}\0\0\0\0mif1`, "latin1")]);
    expect(sniffImage(ftyp("avif"))).toEqual({ type: "image/avif", animated: false });
    expect(sniffImage(ftyp("avis"))).toEqual({ type: "image/avif", animated: true });
    expect(sniffImage(Buffer.from("hello, not an image"))).toBeNull();
    expect(sniffImage(Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>"))).toBeNull();
    expect(sniffImage(Buffer.from("GIF89a"))).toBeNull();
  });

  it("reads PNG and GIF dimensions from their headers", () => {
    expect(imageDimensions(makeGif(3, 2, [[0, 0, 0, 0, 0, 0]]), "image/gif")).toEqual({ width: 3, height: 2 });
    expect(imageDimensions(encodePng(5, 4, new Uint8Array(80)), "image/png")).toEqual({ width: 5, height: 4 });
  });
});

describe("stillImage", () => {
  it("draws an animated GIF's first frame as a PNG, its transparent index clear", () => {
    const gif = makeGif(2, 2, [
      [0, 1, 2, 3],
      [1, 1, 1, 1],
    ]);
    const still = stillImage(gif, "image/gif")!;
    expect(sniffImage(still)).toEqual({ type: "image/png", animated: false });
    expect(decodePng(still)).toEqual({ width: 2, height: 2, pixels: [RED, BLUE, GREEN, CLEAR] });
  });

  it("puts the rows of an interlaced frame in their places", () => {
    const rows = [0, 1, 2, 0, 1, 2, 0, 1, 2];
    // Stored order of 9 rows: 0, 8, 4, 2, 6, 1, 3, 5, 7.
    const stored = [0, 8, 4, 2, 6, 1, 3, 5, 7].map((y) => rows[y]);
    const still = stillImage(makeGif(1, 9, [stored, stored], { interlaced: true }), "image/gif")!;
    expect(decodePng(still).pixels).toEqual(rows.map((i) => [RED, BLUE, GREEN][i]));
  });

  it("decodes codes that grow past their first width", () => {
    // A real encoder's output (not the one-code-per-pixel kind above): 16x1 red, with table entries.
    const width = 16;
    const gif = makeGif(width, 1, [new Array(width).fill(0)]);
    const growing = Buffer.concat([gif.subarray(0, gif.length - 1 - lzw(new Array(width).fill(0)).length), realLzwRun(width), Buffer.from([0x3b])]);
    expect(decodePng(stillImage(growing, "image/gif")!).pixels).toEqual(new Array(width).fill(RED));
  });

  it("makes nothing of formats it cannot draw", () => {
    expect(stillImage(Buffer.from("RIFF\0\0\0\0WEBPVP8X", "latin1"), "image/webp")).toBeNull();
  });
});

/** LZW as encoders write it, with a growing table: `n` copies of index 0 (minimum code size 2). */
function realLzwRun(n: number): Buffer {
  const clear = 4;
  const codes: number[] = [clear];
  const table = new Map<string, number>();
  let next = 6;
  let size = 3;
  const sizes: number[] = [3];
  let w = "0";
  for (let i = 1; i < n; i++) {
    const wc = `${w},0`;
    if (table.has(wc)) {
      w = wc;
      continue;
    }
    codes.push(w === "0" ? 0 : table.get(w)!);
    sizes.push(size);
    // Encoders widen codes one entry ahead of decoders.
    if (next >= 1 << size && size < 12) size++;
    table.set(wc, next++);
    w = "0";
  }
  codes.push(w === "0" ? 0 : table.get(w)!);
  sizes.push(size);
  codes.push(5);
  sizes.push(size);
  const bytes: number[] = [];
  let bits = 0;
  let count = 0;
  codes.forEach((c, i) => {
    bits |= c << count;
    count += sizes[i];
    while (count >= 8) {
      bytes.push(bits & 0xff);
      bits >>>= 8;
      count -= 8;
    }
  });
  if (count > 0) bytes.push(bits & 0xff);
  return Buffer.from([2, bytes.length, ...bytes, 0]);
}
