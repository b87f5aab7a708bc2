import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const ENTRY = fileURLToPath(new URL("../baseline-server.ts", import.meta.url));

/** The bare fastify process (see `src/baseline-server.ts`), started like a service. */
export class BaselineServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  get pid(): number | null {
    return this.child.pid ?? null;
  }

  static async start(): Promise<BaselineServer> {
    const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", ENTRY], {
      env: { ...process.env, PORT: "0", NODE_ENV: "production" },
      stdio: ["pipe", "pipe", "inherit"],
    });
    const port = await new Promise<number>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        const m = /^(\d+)\n/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once("exit", (code) => reject(new Error(`baseline server exited (${code})`)));
    });
    return new BaselineServer(child, `http://127.0.0.1:${port}`);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once("exit", r));
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
}
