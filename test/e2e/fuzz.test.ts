import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { Pool } from "undici";
import { connect } from "node:net";
import { startServer, TARGET_RUNTIME } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { FUZZ_REGION, fuzzRepository, fuzzRequest, fuzzSharedMemory } from "../../harness/fuzz-requests.ts";
import { checkStillCorrect, describeCase, sendFuzzRequest, violation } from "../../harness/fuzz-client.ts";
import { describeGrpcCase, grpcCase, grpcSession, grpcViolation, sendGrpcCase } from "../../harness/fuzz-grpc.ts";
import type { GrpcFuzzCase } from "../../harness/fuzz-grpc.ts";
import type { ClientHttp2Session } from "node:http2";

// Property-based fuzzing of the HTTP and gRPC surfaces (issues 10 and 50): mutated KServe JSON and
// binary bodies, OpenAI and generate bodies, shared-memory calls, odd headers, paths and names; and
// gRPC calls of every method with mutated or damaged messages over a real HTTP/2 connection —
// against the real server with the bundled functions.
// Reproduce a failure with TENSORFN_FUZZ_SEED=<seed printed on failure>; TENSORFN_FUZZ_RUNS scales it
// (each run sends CONCURRENCY cases at once). bench/suites/fuzz.ts runs the same generators for longer.
const SEED = Number(process.env.TENSORFN_FUZZ_SEED ?? Date.now() % 2 ** 31);
const CONCURRENCY = 4;
const RUNS = Number(process.env.TENSORFN_FUZZ_RUNS ?? 1250);
const GRPC_RUNS = Math.ceil(RUNS / 2);
const REQUEST_TIMEOUT_MS = 10_000;

let server: TestServer;
let pool: Pool;
const repository = fuzzRepository();
const shm = fuzzSharedMemory();
beforeAll(async () => {
  server = await startServer({ maxInputBytes: 1024 * 1024, repository: repository.path, cacheSize: 8 * 1024 * 1024, grpc: true });
  pool = new Pool(server.url, { connections: CONCURRENCY, pipelining: 1, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS });
  // The region shared-memory cases name, over both protocols.
  if (shm) await (await fetch(`${server.url}/v2/systemsharedmemory/region/${FUZZ_REGION}/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ key: shm.key, byte_size: 256 }) })).arrayBuffer();
}, 120_000);
afterAll(async () => {
  await pool?.close();
  await server?.close();
  repository.remove();
  shm?.remove();
});

/**
 * `runs` rounds of CONCURRENCY cases at once through `send`, stopping at the first case `judge`
 * finds wrong: that case, readable, or undefined when none was. No shrinking (endOnFailure):
 * against a live server it costs minutes; the case is printed whole.
 */
async function fuzzRounds<C, O>(cases: fc.Arbitrary<C>, runs: number, send: (c: C) => Promise<O>, judge: (c: C, o: O) => string | undefined, describe: (c: C) => string): Promise<{ first?: string; sent: number }> {
  let sent = 0;
  let first: string | undefined;
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(cases, { minLength: CONCURRENCY, maxLength: CONCURRENCY }), async (batch) => {
        const outcomes = await Promise.all(batch.map(send));
        sent += batch.length;
        for (const [i, o] of outcomes.entries()) {
          const why = judge(batch[i]!, o);
          if (!why) continue;
          first ??= `${why}\n  ${describe(batch[i]!)}`;
          throw new Error(why);
        }
      }),
      { seed: SEED, numRuns: runs, endOnFailure: true, interruptAfterTimeLimit: 120_000, markInterruptAsFailure: true, reporter: (d) => void (d.failed && (first ??= d.interrupted ? `interrupted after ${d.numRuns} runs: too slow, or a hang` : String(d.errorInstance))) },
    );
  } catch {
    // fast-check's own report prints every byte of the counterexample; ours is the readable one.
  }
  return { first, sent };
}

describe("the HTTP surface under fuzzing", () => {
  it(
    `answers ${RUNS * CONCURRENCY} mutated requests without a 500, a hang or a non-JSON error, then still answers correctly`,
    async () => {
      const started = performance.now();
      const { first, sent } = await fuzzRounds(fuzzRequest, RUNS, (r) => sendFuzzRequest(pool, server.url, r, REQUEST_TIMEOUT_MS), violation, describeCase);
      if (first) throw new Error(`fuzzing failed (reproduce with TENSORFN_FUZZ_SEED=${SEED}):\n  ${first}`);
      console.log(`fuzz: ${sent} cases in ${((performance.now() - started) / 1000).toFixed(1)} s (seed ${SEED})`);
      expect(await checkStillCorrect(pool)).toBeUndefined();
    },
    240_000,
  );
});

describe("the gRPC surface under fuzzing", () => {
  // Deno 2.9's node:http2 (nghttp2 behind a libuv shim) frees memory twice when a client drops its
  // connection after some sequences of calls: the process dies (SIGABRT "free(): invalid pointer",
  // or SIGSEGV) after ~1,000 of these calls, with tensorfn's adapter or grpc-js's own listener alike
  // (denoland/deno#36788 is the same family). Not ours to fix: docs/reference/grpc-api.md says so.
  it.skipIf(TARGET_RUNTIME === "deno")(
    `answers ${GRPC_RUNS * CONCURRENCY} mutated and damaged calls without INTERNAL, UNKNOWN, a reset or a hang, then still answers correctly`,
    async () => {
      let session: ClientHttp2Session = grpcSession(server.grpc!);
      const started = performance.now();
      const send = (call: GrpcFuzzCase) => {
        // A session the server closed (a GOAWAY after a broken frame) is replaced, as a client reconnects.
        if (session.closed || session.destroyed) session = grpcSession(server.grpc!);
        return sendGrpcCase(session, call, REQUEST_TIMEOUT_MS);
      };
      const { first, sent } = await fuzzRounds(grpcCase(FUZZ_REGION), GRPC_RUNS, send, grpcViolation, describeGrpcCase);
      session.destroy();
      if (first) throw new Error(`gRPC fuzzing failed (reproduce with TENSORFN_FUZZ_SEED=${SEED}):\n  ${first}`);
      console.log(`fuzz (gRPC): ${sent} calls in ${((performance.now() - started) / 1000).toFixed(1)} s (seed ${SEED})`);
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
