import { request, WebSocket } from "undici";

/**
 * A DevTools-protocol connection to a service started with `--inspect` (only stacks this run
 * starts): forces full GCs so memory readings compare live objects rather than whenever V8
 * last collected, and records CPU profiles of exactly the measured windows (`--cpu-prof` is
 * not allowed in NODE_OPTIONS and would cover the whole process life).
 */
export class Inspector {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();

  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener("message", (ev) => {
      const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string } };
      if (msg.id === undefined) return;
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new Error(msg.error.message));
      else p.resolve(msg.result);
    });
    ws.addEventListener("close", () => {
      for (const p of this.pending.values()) p.reject(new Error("inspector connection closed"));
      this.pending.clear();
    });
  }

  static async connect(port: number): Promise<Inspector> {
    const res = await request(`http://127.0.0.1:${port}/json/list`);
    const targets = (await res.body.json()) as Array<{ webSocketDebuggerUrl: string }>;
    if (!targets[0]) throw new Error("no inspector target");
    const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener("open", () => resolve(), { once: true });
      ws.addEventListener("error", () => reject(new Error("inspector connection failed")), { once: true });
    });
    return new Inspector(ws);
  }

  call<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  async collectGarbage(): Promise<void> {
    // Twice: the first pass can leave objects whose finalizers free more on the second.
    await this.call("HeapProfiler.collectGarbage");
    await this.call("HeapProfiler.collectGarbage");
  }

  async startProfile(intervalUs = 500): Promise<void> {
    await this.call("Profiler.enable");
    await this.call("Profiler.setSamplingInterval", { interval: intervalUs });
    await this.call("Profiler.start");
  }

  /** Stops the profile and returns it in `.cpuprofile` form (Chrome DevTools, speedscope). */
  async stopProfile(): Promise<unknown> {
    const { profile } = await this.call<{ profile: unknown }>("Profiler.stop");
    return profile;
  }

  close(): void {
    this.ws.close();
  }
}
