import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Calibrator } from "../src/lib/calibrate";
import { Setup } from "../src/lib/org";
import { renderTable, type Figure } from "../src/lib/report";
import { startTarget, type Target } from "../src/lib/target";
import { runHistory } from "../src/scenarios/history";
import { runIdle } from "../src/scenarios/idle";
import { runPoll } from "../src/scenarios/poll";
import { runRegister } from "../src/scenarios/register";
import { runSend } from "../src/scenarios/send";

/**
 * Every scenario end to end at toy sizes against a real stack: the harness works and the
 * correctness figures hold. No timing is asserted (speed is for `pnpm bench`).
 */

let target: Target;
let setup: Setup;
let calib: Calibrator;
const quiet = () => {};
const find = (figures: Figure[], name: string) => {
  const f = figures.find((x) => x.name.startsWith(name));
  if (!f) throw new Error(`no figure "${name}" in\n${renderTable(figures)}`);
  return f;
};

beforeAll(async () => {
  target = await startTarget();
  setup = new Setup(target);
  calib = await Calibrator.start(target.vars.DATABASE_URL, 2, 200);
});

afterAll(async () => {
  await calib?.stop();
  await setup?.close();
  await target?.stop();
});

describe("bench harness", () => {
  it("send: every message reaches every subscriber exactly once", async () => {
    const { figures } = await runSend(setup, { subscribers: 3, senders: 2, runs: 1, seconds: 1, drainSeconds: 20 }, calib, quiet);
    expect(find(figures, "sustained sends").value).toBeGreaterThan(0);
    expect(find(figures, "lost + duplicated events (closed loop)").value).toBe(0);
    expect(find(figures, "lost + duplicated events at").value).toBe(0);
    expect(find(figures, "send errors").value).toBe(0);
  });

  it("idle: one message reaches every held poll", async () => {
    const { figures } = await runIdle(setup, { polls: 20, users: 5, runs: 1, coolDownMs: 200 }, calib, quiet);
    expect(find(figures, "polls held").value).toBe(20);
    expect(find(figures, "polls that missed the event").value).toBe(0);
  });

  it("register, history and poll produce their figures", async () => {
    const reg = await runRegister(setup, { users: 8, channels: 3, messages: 6, requests: 3, runs: 1 }, calib, quiet);
    expect(find(reg.figures, "POST /register p99").value).toBeGreaterThan(0);
    const hist = await runHistory(setup, { messages: 300, subscribers: 2, requests: 2, runs: 1 }, calib, quiet);
    expect(hist.figures.filter((f) => f.name.startsWith("GET /messages")).length).toBe(8);
    const poll = await runPoll(setup, { queues: 3, rounds: 1, runs: 1 }, calib, quiet);
    expect(find(poll.figures, "GET /events, one event waiting, blocking: p50").value).toBeGreaterThan(0);
  });
});
