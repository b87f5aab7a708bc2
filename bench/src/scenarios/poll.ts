import { createPool, expectOk } from "../lib/http";
import type { Setup } from "../lib/org";
import { figure, type Figure } from "../lib/report";
import { mapLimit, sleep, summarize, type LatencySummary } from "../lib/stats";
import { calibrate, paired, type Calibration, type Calibrator } from "../lib/calibrate";

/**
 * The last target: GET /events with an event already waiting, answered by the events
 * service itself (called directly with the internal token, as the gateway does). Q queues of one
 * user each get exactly one message event per round; then each queue is polled once (blocking,
 * as clients poll; the event is there so it returns at once), acknowledging the previous event.
 */

export interface PollOptions {
  queues: number;
  rounds: number;
  runs: number;
}

export async function runPoll(setup: Setup, opts: PollOptions, calib: Calibrator | null, log: (s: string) => void): Promise<{ figures: Figure[]; raw: unknown }> {
  const org = await setup.createOrg("poll", 1, 1);
  const user = org.users[0];
  const channel = "bench-poll";
  const streamId = (await setup.createChannels(org, [channel], [user.userId])).get(channel)!;
  const pool = createPool(setup.target.urls.events, { connections: 1 });
  const direct = setup.direct(org, user, pool);
  const regPool = createPool(setup.target.urls.events, { connections: 8 });
  const queues = await mapLimit(Array.from({ length: opts.queues }, (_, i) => i), 8, async () => {
    const r = expectOk(await setup.direct(org, user, regPool).get("/events", { dont_block: true, event_types: ["message"] }), "register queue");
    return { id: (r as { queue_id: string }).queue_id, last: -1 };
  });
  await regPool.close();
  const sender = setup.gateway(org.owner);

  const round = async (blocking: boolean, lat: number[]) => {
    expectOk(await sender.post("/messages", { type: "stream", to: streamId, topic: "poll", content: "ping" }), "POST /messages");
    // Wait until the last queue has it (fan-out is one atomic write, so then all have it).
    const last = queues[queues.length - 1];
    for (let i = 0; i < 200; i++) {
      const r = await direct.get("/events", { queue_id: last.id, last_event_id: last.last, dont_block: true });
      if ((r.body.events as unknown[]).length > 0) break;
      await sleep(10);
    }
    for (const q of queues) {
      const r = await direct.get("/events", { queue_id: q.id, last_event_id: q.last, dont_block: !blocking });
      const events = expectOk(r, "GET /events").events as Array<{ id: number }>;
      if (events.length !== 1) throw new Error(`expected one waiting event, got ${events.length}`);
      q.last = events[0].id;
      lat.push(r.ms);
    }
  };

  try {
    for (let i = 0; i < 3; i++) await round(true, []); // warm-up
    await setup.target.profileStart();
    const runs: Array<{ blocking: LatencySummary; nonBlocking: LatencySummary }> = [];
    const cals: Calibration[] = [];
    for (let run = 0; run < opts.runs; run++) {
      cals.push(await calibrate(calib));
      const blocking: number[] = [];
      const nonBlocking: number[] = [];
      for (let i = 0; i < opts.rounds; i++) {
        await round(true, blocking);
        await round(false, nonBlocking);
      }
      runs.push({ blocking: summarize(blocking), nonBlocking: summarize(nonBlocking) });
      log(`  poll run ${run + 1}: blocking p50 ${runs[run].blocking.p50.toFixed(2)} ms, dont_block p50 ${runs[run].nonBlocking.p50.toFixed(2)} ms`);
    }
    await setup.target.profileStop("poll");
    const sc = "poll (events service)";
    const b50 = paired.p50(cals);
    const b99 = paired.p99(cals);
    return {
      figures: [
        figure(sc, "GET /events, one event waiting, blocking: p50", "ms", runs.map((r) => r.blocking.p50), { target: { op: "<", value: 2 }, baseline: b50 }),
        figure(sc, "GET /events, one event waiting, blocking: p99", "ms", runs.map((r) => r.blocking.p99), { baseline: b99 }),
        figure(sc, "GET /events, one event waiting, dont_block: p50", "ms", runs.map((r) => r.nonBlocking.p50), { baseline: b50 }),
      ],
      raw: { options: opts, calibrations: cals, runs },
    };
  } finally {
    await pool.close();
  }
}
