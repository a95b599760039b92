// The long fuzz run (issues 10 and 50): the generators of test/e2e/fuzz.test.ts — HTTP (KServe,
// OpenAI, generate, shared memory, functions…) and gRPC (every method, mutated and damaged messages
// over HTTP/2) side by side — for N cases or M minutes, against an in-process server (or --url and
// --grpc of a running one). Unlike the CI test it does not stop at the first failure: it collects
// every violation, groups them by kind and prints one reproduction per kind.
//
//   npx tsx bench/suites/fuzz.ts [--cases 100000] [--minutes 10] [--seed 42] [--concurrency 4] [--url http://127.0.0.1:8000 --grpc 127.0.0.1:8001]
import { parseArgs } from "node:util";
import fc from "fast-check";
import { Pool } from "undici";
import { startServer } from "../../harness/start-server.ts";
import { FUZZ_REGION, fuzzRepository, fuzzRequest, fuzzSharedMemory } from "../../harness/fuzz-requests.ts";
import type { FuzzRequest } from "../../harness/fuzz-requests.ts";
import { checkStillCorrect, describeCase, sendFuzzRequest, violation } from "../../harness/fuzz-client.ts";
import { describeGrpcCase, grpcCase, grpcSession, grpcViolation, sendGrpcCase } from "../../harness/fuzz-grpc.ts";
import type { GrpcFuzzCase } from "../../harness/fuzz-grpc.ts";

const { values } = parseArgs({
  options: {
    cases: { type: "string" },
    minutes: { type: "string" },
    seed: { type: "string" },
    concurrency: { type: "string", default: "4" },
    url: { type: "string" },
    grpc: { type: "string" },
    "timeout-ms": { type: "string", default: "10000" },
  },
});
const seed = Number(values.seed ?? Date.now() % 2 ** 31);
const maxCases = values.cases ? Number(values.cases) : Infinity;
const deadline = performance.now() + (values.minutes ? Number(values.minutes) * 60_000 : maxCases === Infinity ? 60_000 : Infinity);
const concurrency = Number(values.concurrency);
const timeoutMs = Number(values["timeout-ms"]);

const repository = values.url ? undefined : fuzzRepository();
const shm = fuzzSharedMemory();
const server = repository && (await startServer({ maxInputBytes: 1024 * 1024, repository: repository.path, cacheSize: 8 * 1024 * 1024, grpc: true }));
const url = values.url ?? server!.url;
const grpcAddress = values.grpc ?? server?.grpc;
if (shm) await (await fetch(`${url}/v2/systemsharedmemory/region/${FUZZ_REGION}/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ key: shm.key, byte_size: 256 }) })).arrayBuffer();
const pool = new Pool(url, { connections: concurrency, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
console.log(`fuzzing ${url} with seed ${seed}, concurrency ${concurrency}`);

// A fresh fast-check random stream per batch, derived from the seed: batch i of seed s is always the same cases.
const BATCH = 200;
const byKind = new Map<string, { count: number; example: string }>();
const statuses = new Map<number, number>();
const grpcStatuses = new Map<string, number>();
let sent = 0;
let sentGrpc = 0;
let slowest = { ms: 0, label: "" };
const started = performance.now();
for (let batch = 0; sent < maxCases && performance.now() < deadline; batch++) {
  const cases = fc.sample(fuzzRequest, { seed: seed + batch, numRuns: Math.min(BATCH, maxCases - sent) });
  const calls: GrpcFuzzCase[] = grpcAddress ? fc.sample(grpcCase(FUZZ_REGION), { seed: seed + batch, numRuns: Math.ceil(BATCH / 2) }) : [];
  let next = 0;
  let nextCall = 0;
  const record = (kind: string, example: () => string) => {
    const entry = byKind.get(kind) ?? { count: 0, example: example() };
    entry.count++;
    byKind.set(kind, entry);
  };
  await Promise.all([
    ...Array.from({ length: concurrency }, async () => {
      while (next < cases.length) {
        const index = next++;
        const req: FuzzRequest = cases[index]!;
        const outcome = await sendFuzzRequest(pool, url, req, timeoutMs);
        sent++;
        if (outcome.status !== undefined) statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
        if (outcome.ms > slowest.ms) slowest = { ms: outcome.ms, label: req.label };
        const why = violation(req, outcome);
        if (why) record(why.replace(/\d+(\.\d+)? ms/g, "N ms").slice(0, 120), () => `${why.slice(0, 600)}\n  (seed ${seed + batch}, case ${index})\n  ${describeCase(req)}`);
      }
    }),
    // gRPC beside HTTP, over one connection per worker (replaced when the server closes it).
    ...Array.from({ length: grpcAddress ? Math.max(1, concurrency / 2) : 0 }, async () => {
      let session = grpcSession(grpcAddress!);
      while (nextCall < calls.length) {
        const index = nextCall++;
        const call = calls[index]!;
        if (session.closed || session.destroyed) session = grpcSession(grpcAddress!);
        const outcome = await sendGrpcCase(session, call, timeoutMs);
        sentGrpc++;
        const code = outcome.status ?? `reset ${outcome.reset ?? "-"}`;
        grpcStatuses.set(String(code), (grpcStatuses.get(String(code)) ?? 0) + 1);
        const why = grpcViolation(call, outcome);
        if (why) record(`gRPC: ${why.replace(/\d+(\.\d+)? ms/g, "N ms").slice(0, 110)}`, () => `${why.slice(0, 600)}\n  (seed ${seed + batch}, gRPC case ${index})\n  ${describeGrpcCase(call)}`);
      }
      session.destroy();
    }),
  ]);
  if (batch % 10 === 9) console.log(`  ${sent} HTTP cases, ${sentGrpc} gRPC calls, ${byKind.size} kinds of violation, ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
const seconds = (performance.now() - started) / 1000;
const after = await checkStillCorrect(pool).catch((e: Error) => `no answer: ${e.message}`);
console.log(`\n${sent} HTTP cases and ${sentGrpc} gRPC calls in ${seconds.toFixed(1)} s (${((sent + sentGrpc) / seconds).toFixed(0)}/s), seed ${seed}`);
console.log(`HTTP statuses: ${[...statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(" ")}`);
console.log(`gRPC statuses: ${[...grpcStatuses].sort().map(([s, n]) => `${s}×${n}`).join(" ")}`);
console.log(`slowest answer: ${slowest.ms.toFixed(0)} ms (${slowest.label})`);
console.log(`afterwards: ${after ?? "alive, simple answers the known values"}`);
for (const [kind, { count, example }] of byKind) console.log(`\n[${count}×] ${kind}\n  ${example}`);
await pool.close();
await server?.close();
repository?.remove();
shm?.remove();
process.exit(byKind.size > 0 || after ? 1 : 0);
