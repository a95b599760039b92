import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { Pool } from "undici";
import { connect } from "node:net";
import { startServer, TARGET_RUNTIME } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { fuzzRepository, fuzzRequest } from "../../harness/fuzz-requests.ts";
import { checkStillCorrect, describeCase, sendFuzzRequest, violation } from "../../harness/fuzz-client.ts";

// Property-based fuzzing of the HTTP surface (issue 10, "Tests"): mutated KServe JSON and binary
// bodies, odd headers, paths and names against the real server with the bundled functions.
// Reproduce a failure with TENSORFN_FUZZ_SEED=<seed printed on failure>; TENSORFN_FUZZ_RUNS scales it
// (each run sends CONCURRENCY cases at once). bench/suites/fuzz.ts runs the same generators for longer.
const SEED = Number(process.env.TENSORFN_FUZZ_SEED ?? Date.now() % 2 ** 31);
const CONCURRENCY = 4;
const RUNS = Number(process.env.TENSORFN_FUZZ_RUNS ?? 1250);
const REQUEST_TIMEOUT_MS = 10_000;

let server: TestServer;
let pool: Pool;
const repository = fuzzRepository();
beforeAll(async () => {
  server = await startServer({ maxInputBytes: 1024 * 1024, repository: repository.path, cacheSize: 8 * 1024 * 1024 });
  pool = new Pool(server.url, { connections: CONCURRENCY, pipelining: 1, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS });
}, 120_000);
afterAll(async () => {
  await pool?.close();
  await server?.close();
  repository.remove();
});

describe("the HTTP surface under fuzzing", () => {
  it(
    `answers ${RUNS * CONCURRENCY} mutated requests without a 500, a hang or a non-JSON error, then still answers correctly`,
    async () => {
      let cases = 0;
      let first: string | undefined;
      const started = performance.now();
      try {
        await fc.assert(
          fc.asyncProperty(fc.array(fuzzRequest, { minLength: CONCURRENCY, maxLength: CONCURRENCY }), async (requests) => {
            const outcomes = await Promise.all(requests.map((r) => sendFuzzRequest(pool, server.url, r, REQUEST_TIMEOUT_MS)));
            cases += requests.length;
            for (const [i, o] of outcomes.entries()) {
              const why = violation(requests[i]!, o);
              if (!why) continue;
              first ??= `${why}\n  ${describeCase(requests[i]!)}`;
              throw new Error(why);
            }
          }),
          // No shrinking (endOnFailure): against a live server it costs minutes; the case is printed whole.
          { seed: SEED, numRuns: RUNS, endOnFailure: true, interruptAfterTimeLimit: 120_000, markInterruptAsFailure: true, reporter: (d) => void (d.failed && (first ??= d.interrupted ? `interrupted after ${d.numRuns} runs: too slow, or a hang` : String(d.errorInstance))) },
        );
      } catch {
        // fast-check's own report prints every byte of the counterexample; ours is the readable one.
      }
      if (first) throw new Error(`fuzzing failed (reproduce with TENSORFN_FUZZ_SEED=${SEED}):\n  ${first}`);
      const seconds = (performance.now() - started) / 1000;
      console.log(`fuzz: ${cases} cases in ${seconds.toFixed(1)} s (seed ${SEED})`);
      expect(await checkStillCorrect(pool)).toBeUndefined();
    },
    240_000,
  );
});

describe("requests the HTTP parser refuses", () => {
  it.skipIf(TARGET_RUNTIME === "bun")("answers a request head over 16 KiB with 431 and a JSON error, then keeps serving", async () => {
    const { hostname, port } = new URL(server.url);
    const answer = await new Promise<string>((resolve, reject) => {
      let text = "";
      const socket = connect(Number(port), hostname, () => socket.write(`GET /v2/${"a".repeat(17_600)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
      socket.on("data", (chunk) => (text += chunk.toString()));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as { error: string };
    expect(body.error).toMatch(/Request Header Fields Too Large/);
    expect(await checkStillCorrect(pool)).toBeUndefined();
  });
});
