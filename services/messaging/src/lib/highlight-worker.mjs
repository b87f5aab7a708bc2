// The thread highlight.ts runs highlight.js in, so that a grammar that is slow on some input can
// be stopped (see highlight.ts). Plain JavaScript: it must load the same way under tsx, vitest
// and node. Once the grammars are loaded `signal[0]` becomes 1 (2 if they
// cannot be). Requests come on `port` as
// {id, code, grammar}; each reply is {id, html} (html null if highlight.js failed), after which
// `signal[1]` is set to the id. Each change of `signal` wakes its waiters.
import { workerData } from "node:worker_threads";

const { port, signal, grammars } = workerData;

// highlight.js itself is imported here too, not statically: a thread that cannot load it says so
// at once (2) instead of leaving the service waiting out highlight.ts's start time for it.
let hljs = null;
try {
  hljs = (await import("highlight.js/lib/core")).default;
  for (const name of grammars) {
    const { default: grammar } = await import(`highlight.js/lib/languages/${name}`);
    hljs.registerLanguage(name, grammar);
  }
  Atomics.store(signal, 0, 1);
} catch (err) {
  console.error("highlight worker: cannot load highlight.js's grammars:", err);
  Atomics.store(signal, 0, 2);
}
Atomics.notify(signal, 0);

port.on("message", ({ id, code, grammar }) => {
  let html = null;
  try {
    if (hljs) html = hljs.highlight(code, { language: grammar, ignoreIllegals: true }).value;
  } catch {
    // Shown unhighlighted.
  }
  port.postMessage({ id, html });
  Atomics.store(signal, 1, id);
  Atomics.notify(signal, 1);
});
