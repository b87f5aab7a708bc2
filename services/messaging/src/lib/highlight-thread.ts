import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import { HLJS_GRAMMARS } from "./code-languages";

/**
 * highlight.js on a worker thread (highlight-worker.mjs), called synchronously with a deadline:
 * its regular expressions cannot be interrupted, and some of its grammars are slow on some inputs,
 * so a call that runs late stops the thread (a new one starts in its place).
 */

/** How long a new thread may take to start and load the grammars (about 0.2 s). */
const THREAD_START_MS = 10_000;

/** A highlighting thread; `signal` is [1 once it has loaded the grammars, id of the last reply]. */
interface HighlightThread {
  worker: Worker;
  port: MessagePort;
  signal: Int32Array;
}

let thread: HighlightThread | null = null;
/** The thread could not start: the process highlights nothing rather than wait for it each time. */
let threadFailed = false;
let lastId = 0;

function startThread(): HighlightThread {
  const { port1, port2 } = new MessageChannel();
  const signal = new Int32Array(new SharedArrayBuffer(8));
  const worker = new Worker(new URL("./highlight-worker.mjs", import.meta.url), {
    // Plain JavaScript needs none of the process's --import preloads, and some cannot load in a
    // thread (a TypeScript preload after tsx: the thread has no tsx hooks yet), which stopped it.
    execArgv: [],
    workerData: { port: port2, signal, grammars: HLJS_GRAMMARS },
    transferList: [port2],
  });
  // Never what keeps the process alive; a thread that fails is replaced on the next call.
  worker.unref();
  const started: HighlightThread = { worker, port: port1, signal };
  worker.on("error", () => stopThread(started));
  return started;
}

function stopThread(t: HighlightThread): void {
  if (thread === t) thread = null;
  t.port.close();
  void t.worker.terminate();
}

/**
 * Starts the thread now, so that the first message with code finds its grammars loaded instead
 * of waiting (about 0.2 s) for them.
 */
export function startHighlighting(): void {
  if (!thread && !threadFailed) thread = startThread();
}

/** Waits until `signal[slot]` is no longer `from`; false if `ms` pass first. */
function waitChange(signal: Int32Array, slot: number, from: number, ms: number): boolean {
  const deadline = performance.now() + ms;
  for (;;) {
    if (Atomics.load(signal, slot) !== from) return true;
    const left = deadline - performance.now();
    if (left <= 0) return false;
    Atomics.wait(signal, slot, from, left);
  }
}

/** highlight.js's HTML for `code`, or null when it failed or took longer than `ms`. */
export function runHighlightJs(code: string, grammar: string, ms: number): string | null {
  if (threadFailed) return null;
  const t = (thread ??= startThread());
  if (!waitChange(t.signal, 0, 0, THREAD_START_MS) || Atomics.load(t.signal, 0) !== 1) {
    // It said why on stderr; do not wait for another one in every message.
    threadFailed = true;
    stopThread(t);
    return null;
  }
  const before = Atomics.load(t.signal, 1);
  const id = (lastId = (lastId % 0x7fffffff) + 1);
  t.port.postMessage({ id, code, grammar });
  // Replies come in order: the next change of the reply slot is this one's.
  if (!waitChange(t.signal, 1, before, ms)) {
    stopThread(t);
    // The next one starts now, in the background, rather than when the next code block waits.
    thread = startThread();
    return null;
  }
  for (let m = receiveMessageOnPort(t.port); m; m = receiveMessageOnPort(t.port)) {
    const reply = m.message as { id: number; html: string | null };
    if (reply.id === id) return reply.html;
  }
  return null;
}
