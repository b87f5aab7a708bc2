import { readFileSync } from "node:fs";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { defineConfig } from "vitest/config";

/**
 * Files that boot the whole stack (five service processes) or build images dominate the run.
 * They start first, so the many short files fill the other workers around them instead of a
 * long one starting last and running alone. With a results cache (a developer's later runs)
 * vitest's own longest-first order already does this; on a fresh clone (CI) this is what does.
 */
const HEAVY = /\bstartStack\(|\brunDemo\(|\bexecFileSync\(|\bspawnSync\(/;

class HeavyFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const heavy = new Set(sorted.filter((f) => HEAVY.test(readFileSync(f.moduleId, "utf8"))));
    return [...sorted.filter((f) => heavy.has(f)), ...sorted.filter((f) => !heavy.has(f))];
  }
}

/**
 * Files that assert on latency (a timing side channel must stay within noise) run alone after
 * everything else, so the parallel files' load cannot pass for a leak.
 */
const ALONE = ["test/security/isolation.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    sequence: { sequencer: HeavyFirstSequencer },
    globalSetup: ["packages/testkit/src/global-setup.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "parallel",
          include: ["bench/src/**/*.test.ts", "packages/*/src/**/*.test.ts", "services/*/src/**/*.test.ts", "services/*/test/**/*.test.ts", "test/**/*.test.ts"],
          exclude: ["**/node_modules/**", ...ALONE],
          // Vitest's default on 2 cores is one worker, which runs every file in turn although
          // most of a file's time is spent waiting on PostgreSQL, RabbitMQ or a service.
          // VITEST_MAX_WORKERS overrides it.
          maxWorkers: Number(process.env.VITEST_MAX_WORKERS ?? 3),
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: "alone", include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
