import { INTERNAL_HEADERS } from "@chat/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SENDS_EMAIL_BY_IP } from "../src/actions/mail-requests";
import { startAccounts, type Accounts, type Org } from "./helpers";

/**
 * Zulip's `sends_email_by_ip`: the forms that mail someone without an account (password reset, a
 * reusable link's address form) send at most 5 mails a day for one client address, as the
 * gateway passes it on. Past it, a page that says so (429) and no mail; the limits per recipient
 * address stay as they are (see password-reset.test.ts).
 */

let t: Accounts;
let org: Org;
let joinPath: string;

beforeAll(async () => {
  t = await startAccounts({ EXTERNAL_URL: "http://chat.test" });
  org = await t.createOrg();
  const link = await t.ok(await t.call("POST", "/invites/multiuse", { as: org.admin.as, params: { invite_as: 400 } }));
  joinPath = new URL(link.invite_link).pathname;
}, 60_000);

afterAll(async () => {
  await t?.close();
});

let n = 0;
const newAddress = () => `stranger${++n}-${Date.now()}@elsewhere.test`;
const from = (ip: string) => ({ [INTERNAL_HEADERS.clientIp]: ip });
const reset = (ip: string, email = newAddress()) => t.call("POST", "/accounts/password/reset/", { params: { email }, headers: from(ip) });
const join = (ip: string, email = newAddress()) => t.call("POST", joinPath, { params: { email }, headers: from(ip) });
const mailCount = async () => Number((await t.pool.query("SELECT count(*) FROM mail_outbox")).rows[0].count);
const hours = (h: number) => t.clock.advance(h * 3_600_000);

function expectPage(res: { status: number; headers: Record<string, unknown>; body: any }, status: number, text: string) {
  expect(res.status, String(res.body)).toBe(status);
  expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
  expect(res.headers["cache-control"]).toBe("no-store");
  expect(res.body).toContain(text);
}

describe("mails asked for anonymously, per client address", () => {
  it("the two forms share 5 a day; the sixth is a 429 page that mails nothing; a day after the first, one more", async () => {
    expect(SENDS_EMAIL_BY_IP).toEqual({ seconds: 86_400, max: 5 });
    const ip = "203.0.113.1";
    const sent = await mailCount();
    for (const ask of [reset, join, reset, join, reset]) {
      expect((await ask(ip)).status).toBe(200);
      hours(1);
    }
    expect(await mailCount()).toBe(sent + 5);

    for (const ask of [join, reset]) {
      const limited = await ask(ip);
      expectPage(limited, 429, "Too many emails were requested from your network today.");
      // An hour after the fifth, the first leaves the day in 19 hours.
      expect(limited.headers["retry-after"]).toBe(String(19 * 3600));
      expect(limited.body).toContain("Try again in 19 hours.");
    }
    expect(await mailCount()).toBe(sent + 5);
    // Nobody was signed up by the refused request.
    expect(Number((await t.pool.query("SELECT count(*) FROM multiuse_signups")).rows[0].count)).toBe(2);

    // Another client is not held back.
    expectPage(await join("203.0.113.2"), 200, "Check your email");
    expect(await mailCount()).toBe(sent + 6);

    hours(18.99);
    expect((await reset(ip)).status).toBe(429);
    hours(0.02);
    expectPage(await reset(ip), 200, "Check your email");
    expect((await join(ip)).status).toBe(429);
    expect(await mailCount()).toBe(sent + 7);
  });

  it("a request refused for its address (invalid, or past that address's own limit) is not counted", async () => {
    const ip = "203.0.113.3";
    for (let i = 0; i < 6; i++) expect((await reset(ip, "not an address")).status).toBe(400);
    for (let i = 0; i < 6; i++) expect((await join(ip, "not an address")).status).toBe(400);
    // Past its own limit (2 an hour), an address gets the same page and nothing is sent.
    const busy = newAddress();
    for (let i = 0; i < 6; i++) expectPage(await reset(ip, busy), 200, "Check your email");
    for (let i = 0; i < 3; i++) expectPage(await reset(ip), 200, "Check your email");
    expect((await reset(ip)).status).toBe(429);
  });

  it("an IPv6 client counts by its /64: fresh addresses of one network share its 5; another /64 has its own", async () => {
    const sent = await mailCount();
    const asks = [reset, join, reset, join, reset];
    for (let i = 0; i < 5; i++) expectPage(await asks[i](`2001:db8:5:1::${i + 1}`), 200, "Check your email");
    // Another address of the same /64, however written, is the same client.
    for (const ip of ["2001:db8:5:1:ffff:ffff:ffff:ffff", "2001:DB8:5:1::abcd", "2001:0db8:0005:0001:0:0:0:6"]) {
      expectPage(await reset(ip), 429, "Too many emails were requested from your network today.");
      expectPage(await join(ip), 429, "Too many emails were requested from your network today.");
    }
    expect(await mailCount()).toBe(sent + 5);
    // The neighbouring /64, and an IPv4 client, are not held back.
    expectPage(await reset("2001:db8:5:2::1"), 200, "Check your email");
    expectPage(await reset("203.0.113.20"), 200, "Check your email");
    expect(await mailCount()).toBe(sent + 7);
  });

  it("an IPv4 client counts by its whole address, also when it comes as an IPv4-mapped IPv6 address", async () => {
    const sent = await mailCount();
    for (const ip of ["198.51.100.7", "::ffff:198.51.100.7", "198.51.100.7", "::ffff:c633:6407", "198.51.100.7"]) {
      expectPage(await reset(ip), 200, "Check your email");
    }
    expect((await join("::ffff:198.51.100.7")).status).toBe(429);
    expect((await reset("198.51.100.7")).status).toBe(429);
    // Its neighbour, in either form, has its own 5.
    expectPage(await reset("198.51.100.8"), 200, "Check your email");
    expectPage(await join("::ffff:198.51.100.9"), 200, "Check your email");
    expect(await mailCount()).toBe(sent + 7);
  });

  it("a request the gateway did not pass on is counted against the peer's address", async () => {
    const peer = (email = newAddress()) => t.call("POST", "/accounts/password/reset/", { params: { email } });
    for (let i = 0; i < 5; i++) expect((await peer()).status).toBe(200);
    expect((await peer()).status).toBe(429);
  });
});
