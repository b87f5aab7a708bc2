import { crc32, deflateSync } from "node:zlib";

/**
 * The Notification Bot's avatar, drawn here: a robot's head on the default logo's blue, as a PNG
 * (clients show avatars with image decoders that need a bitmap format, not SVG). Zulip gives
 * its system bots fixed images too instead of a Gravatar.
 */
export function botAvatarPng(size = 128): Buffer {
  const s = size / 128;
  const blue = [74, 111, 165];
  const white = [255, 255, 255];
  const inRect = (x: number, y: number, x0: number, y0: number, x1: number, y1: number, r = 0) => {
    if (x < x0 * s || x > x1 * s || y < y0 * s || y > y1 * s) return false;
    const cx = Math.min(Math.max(x, (x0 + r) * s), (x1 - r) * s);
    const cy = Math.min(Math.max(y, (y0 + r) * s), (y1 - r) * s);
    return (x - cx) ** 2 + (y - cy) ** 2 <= (r * s) ** 2;
  };
  const inCircle = (x: number, y: number, cx: number, cy: number, r: number) => (x - cx * s) ** 2 + (y - cy * s) ** 2 <= (r * s) ** 2;
  const pixel = (x: number, y: number) => {
    const head = inRect(x, y, 30, 40, 98, 98, 12) || inRect(x, y, 61, 24, 67, 40) || inCircle(x, y, 64, 22, 7);
    const face = inCircle(x, y, 49, 62, 8) || inCircle(x, y, 79, 62, 8) || inRect(x, y, 46, 80, 82, 86, 3);
    return head && !face ? white : blue;
  };
  return encodePng(size, pixel);
}

/** A square RGB PNG of `size` pixels, each pixel's color given at its center. */
export function encodePng(size: number, pixel: (x: number, y: number) => number[]): Buffer {
  // One filter byte (0: none) before each row of RGB pixels.
  const raw = Buffer.alloc((size * 3 + 1) * size);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) raw.set(pixel(x + 0.5, y + 0.5), y * (size * 3 + 1) + 1 + x * 3);
  }
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per channel, RGB, deflate, no filter method, no interlace
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}
