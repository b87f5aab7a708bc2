import type { Caller } from "./http";

export interface PollStats {
  polls: number;
  events: number;
  heartbeats: number;
  errors: number;
  errorSamples: string[];
}

/**
 * One client's long-poll loop on its queue: GET /events with the last seen id, forever, handing
 * each event to `onEvent` with the moment its response arrived.
 */
export class Poller {
  readonly stats: PollStats = { polls: 0, events: 0, heartbeats: 0, errors: 0, errorSamples: [] };
  private running = false;
  private abort = new AbortController();
  private loop: Promise<void> | null = null;

  constructor(
    private readonly caller: Caller,
    readonly queueId: string,
    private lastEventId: number,
    private readonly onEvent: (event: any, receivedAt: number) => void,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        const r = await this.caller.get("/events", { queue_id: this.queueId, last_event_id: this.lastEventId }, this.abort.signal);
        const at = performance.now();
        this.stats.polls++;
        if (r.status !== 200 || r.body?.result !== "success") {
          this.failed(`HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
          // A dead queue will not come back: stop instead of spinning.
          if (r.body?.code === "BAD_EVENT_QUEUE_ID") return;
          await new Promise((res) => setTimeout(res, 100));
          continue;
        }
        for (const event of r.body.events as any[]) {
          if (event.id > this.lastEventId) this.lastEventId = event.id;
          if (event.type === "heartbeat") this.stats.heartbeats++;
          else {
            this.stats.events++;
            this.onEvent(event, at);
          }
        }
      } catch (err) {
        if (!this.running) return;
        this.failed((err as Error).message);
        await new Promise((res) => setTimeout(res, 100));
      }
    }
  }

  private failed(msg: string) {
    this.stats.errors++;
    if (this.stats.errorSamples.length < 3) this.stats.errorSamples.push(msg);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.abort.abort();
    await this.loop;
  }
}
