import type { ApiClient } from "@chat/testkit";
import type { Load, RequestRecord, TrackedQueue } from "./load";

/** What one fault phase did to the clients, in the figures the report table prints. */
export interface PhaseReport {
  fault: string;
  requests: number;
  successes: number;
  /** Failed requests by code (Zulip code, HTTP_<status> or network error), most frequent first. */
  errors: Record<string, number>;
  sendsOk: number;
  messagesLost: number;
  queuesChecked: number;
  queuesLost: number;
  eventsLost: number;
  eventsDuplicated: number;
  /** Events out of order: queue event ids not increasing, or one sender's messages reordered. */
  eventsOutOfOrder: number;
  /** Events for messages that are not in the history (phantoms). */
  eventsUnknown: number;
  /** Slowest answer to a failed request (a hang shows here). */
  slowestFailureMs: number;
  /** How long the fault lasted (down + restart, or the outage window). */
  faultMs: number;
  /** From the fault's end until a new send was accepted and every live queue had its event. */
  recoveryMs: number | null;
  notes: string[];
  /** One example per error code: which request, and what it said. */
  samples: Record<string, string>;
}

export interface HistoryMessage {
  id: number;
  content: string;
  sender_email: string;
}

/** The whole topic as the server stores it, oldest first (paged, like a client catching up). */
export async function fetchTopic(client: ApiClient, streamId: number, topic: string): Promise<HistoryMessage[]> {
  const out: HistoryMessage[] = [];
  let anchor: number | "oldest" = "oldest";
  for (;;) {
    const res = await client.get("/messages", {
      anchor: String(anchor),
      num_before: 0,
      num_after: 1000,
      include_anchor: anchor === "oldest",
      apply_markdown: false,
      narrow: [
        { operator: "stream", operand: streamId },
        { operator: "topic", operand: topic },
      ],
    });
    if (res.status !== 200) throw new Error(`GET /messages answered ${res.status}: ${JSON.stringify(res.body)}`);
    const page = res.body.messages as HistoryMessage[];
    out.push(...page);
    if (res.body.found_newest || page.length === 0) return out;
    anchor = page[page.length - 1].id;
  }
}

function countErrors(requests: RequestRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of requests) if (r.outcome !== "success") counts[r.outcome] = (counts[r.outcome] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort((a, b) => b[1] - a[1]));
}

/** Compares one queue's deliveries with the history it owes (every message after its register). */
export function checkQueue(queue: TrackedQueue, history: HistoryMessage[], senderOf: Map<number, string>) {
  const owed = history.filter((m) => m.id > queue.maxMessageId).map((m) => m.id);
  const received = queue.messages.map((m) => m.id);
  const receivedSet = new Set(received);
  const known = new Set(history.map((m) => m.id));
  const lost = owed.filter((id) => !receivedSet.has(id)).length;
  const duplicated = received.length - receivedSet.size;
  const unknown = received.filter((id) => !known.has(id)).length;
  let outOfOrder = 0;
  for (let i = 1; i < queue.eventIds.length; i++) if (queue.eventIds[i] <= queue.eventIds[i - 1]) outOfOrder++;
  // One sender's messages are sent one after another, so they must arrive in that order.
  const lastBySender = new Map<string, number>();
  for (const id of received) {
    const sender = senderOf.get(id);
    if (sender === undefined) continue;
    const prev = lastBySender.get(sender);
    if (prev !== undefined && id < prev) outOfOrder++;
    lastBySender.set(sender, id);
  }
  return { lost, duplicated, unknown, outOfOrder, owed: owed.length };
}

export function buildReport(fault: string, load: Load, history: HistoryMessage[], faultStart: number, faultEnd: number): PhaseReport {
  const requests = load.requests;
  const stored = new Map(history.map((m) => [m.id, m]));
  const accepted = load.sends.filter((s) => s.id !== null);
  const messagesLost = accepted.filter((s) => stored.get(s.id!)?.content !== s.content).length;
  const senderOf = new Map(history.map((m) => [m.id, m.sender_email]));

  let eventsLost = 0;
  let eventsDuplicated = 0;
  let eventsOutOfOrder = 0;
  let eventsUnknown = 0;
  const live = load.liveQueues();
  for (const q of live) {
    const r = checkQueue(q, history, senderOf);
    eventsLost += r.lost;
    eventsDuplicated += r.duplicated;
    eventsOutOfOrder += r.outOfOrder;
    eventsUnknown += r.unknown;
  }

  // Recovery: the first send begun after the fault ended whose event every live queue registered
  // before it then received.
  let recoveryMs: number | null = null;
  for (const s of accepted.filter((x) => x.startedAt >= faultEnd).sort((a, b) => a.startedAt - b.startedAt)) {
    const owners = live.filter((q) => q.registeredAt <= s.startedAt);
    const seen = owners.map((q) => q.messages.find((m) => m.id === s.id)?.at);
    if (seen.every((t) => t !== undefined)) {
      recoveryMs = Math.max(s.endedAt, ...(seen as number[])) - faultEnd;
      break;
    }
  }

  const failures = requests.filter((r) => r.outcome !== "success");
  return {
    fault,
    requests: requests.length,
    successes: requests.length - failures.length,
    errors: countErrors(requests),
    sendsOk: accepted.length,
    messagesLost,
    queuesChecked: live.length,
    queuesLost: load.queues.length - live.length,
    eventsLost,
    eventsDuplicated,
    eventsOutOfOrder,
    eventsUnknown,
    slowestFailureMs: failures.reduce((m, r) => Math.max(m, r.endedAt - r.startedAt), 0),
    faultMs: faultEnd - faultStart,
    recoveryMs,
    notes: [],
    samples: Object.fromEntries(failures.map((f) => [f.outcome, `${f.kind}: ${f.detail ?? ""}`])),
  };
}

const seconds = (ms: number | null) => (ms === null ? "never" : `${(ms / 1000).toFixed(1)} s`);

/** The table the issue asks for, as Markdown (it reads fine in a terminal too). */
export function formatTable(reports: PhaseReport[]): string {
  const head = [
    "fault",
    "requests",
    "ok",
    "errors by code",
    "msgs sent ok",
    "msgs lost",
    "queues checked (lost)",
    "events lost / dup / misordered",
    "fault lasted",
    "recovery",
  ];
  const rows = reports.map((r) => [
    r.fault,
    String(r.requests),
    String(r.successes),
    Object.entries(r.errors)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ") || "-",
    String(r.sendsOk),
    String(r.messagesLost),
    `${r.queuesChecked} (${r.queuesLost})`,
    `${r.eventsLost} / ${r.eventsDuplicated} / ${r.eventsOutOfOrder + r.eventsUnknown}`,
    seconds(r.faultMs),
    seconds(r.recoveryMs),
  ]);
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

/** Notes and one example per error code, under the table. */
export function formatDetails(reports: PhaseReport[]): string {
  const out: string[] = [];
  for (const r of reports) {
    const lines = [...r.notes, ...Object.entries(r.samples).map(([code, text]) => `${code}: ${text}`)];
    if (lines.length) out.push(`- ${r.fault}:`, ...lines.map((l) => `  - ${l}`));
  }
  return out.join("\n");
}
