import { encodePng } from "./bot-avatar";

/**
 * The avatar of Zulip's "Unknown user" stand-in (a user a guest may not access): a grey head and
 * shoulders on a lighter grey, drawn here as the Notification Bot's is.
 */
export function unknownUserAvatarPng(size = 128): Buffer {
  const s = size / 128;
  const background = [216, 216, 216];
  const figure = [150, 150, 150];
  const inCircle = (x: number, y: number, cx: number, cy: number, r: number) => (x - cx * s) ** 2 + (y - cy * s) ** 2 <= (r * s) ** 2;
  return encodePng(size, (x, y) => (inCircle(x, y, 64, 48, 22) || (inCircle(x, y, 64, 128, 44) && y >= 84 * s) ? figure : background));
}
