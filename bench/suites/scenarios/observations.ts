import { DISTURBED_CORES } from "./cpu-meter.ts";
import type { Measured } from "./measure-step.ts";
import type { RawPoint } from "./raw.ts";
import { ADAPTIVE_LEVELS, ADAPTIVE_LOOSE_TARGET_MS, ADAPTIVE_TARGET_MS } from "./served.ts";
import { adaptiveComparison, bestResnetBatched, bestStaticMlp, cpuPerRequest, delayOf, fixed, overheadUs, probeStep, staticMlpSteps, step, sweepRounds } from "./scenario-results.ts";
import { comparePoints, GOALS } from "./targets.ts";
import type { ScenarioResults } from "./scenario-results.ts";

/**
 * The "What we saw" paragraphs: each explanation is written next to the numbers of this run that
 * support it, so a rerun that measures something else says so instead of repeating stale prose.
 */
export function observations(results: ScenarioResults): string[] {
  return [background(results), behindHandwritten(results), resnet(results), mlpGain(results), overhead(results), ...adaptive(results), wake(results), readiness(results)].filter(
    (t): t is string => t !== undefined,
  );
}

/** Target 1's missed points with what each server spent per request. */
function behindHandwritten(results: ScenarioResults): string | undefined {
  const missed = comparePoints(results).filter((p) => p.met === false);
  if (missed.length === 0) return undefined;
  const cpu = (s: Measured | undefined) => fixed(cpuPerRequest(s, s?.cores.server), 0);
  const items = missed.map((p) => `${p.model} c=${p.concurrency} ${p.encoding === "json" ? "JSON" : "binary"} ${fixed(p.ratio, 2)}× (${cpu(p.tensorfn)} / ${cpu(p.handwritten)} µs)`);
  return (
    `**Behind the hand-written server** (target 1), with the server CPU per request of tensorfn / node:http: ${items.join(", ")}. ` +
    "Where tensorfn spent more, the difference is its own work per request beside the same session.run (queue, batcher, statistics, checks); " +
    "`npx tsx bench/studies/router-cost.ts` measures that part without HTTP. One window moves by ±15 % between back-to-back runs of one server here (section 4), so a single point that close to 1.0 is not settled by this run."
  );
}

/** Target 7 when readiness missed: what a probe waits for under this load. */
function readiness(results: ScenarioResults): string | undefined {
  const s = probeStep(results);
  const ready = s?.probes?.ready;
  if (!s || !ready || ready.p99 <= GOALS.readyP99Ms) return undefined;
  const batch = s.server ? ` of ${fixed(s.server.avgBatchSize, 1)} rows` : "";
  return (
    `**Readiness under load** (target 7): p50 ${fixed(ready.p50, 2)} ms, p99 ${fixed(ready.p99, 2)} ms while mlp answered ${fixed(s.inferPerS, 0)} req/s to ${s.concurrency} JSON clients, the server's main thread busy ${fixed(s.cores.serverMain, 2)} cores. ` +
    `A probe is answered on the event loop after the turn in progress, and a turn here reads and decodes the requests that arrived since the last one and runs one inline batch${batch}; what stretches the slowest turns is not measured by this run.`
  );
}

/** Target 6: why a wake from PARKED costs more than the raw create it is compared with. */
function wake(results: ScenarioResults): string | undefined {
  const colds = results.coldStarts ?? [];
  if (colds.length === 0) return undefined;
  const list = colds.map((c) => `${c.model} ${fixed(c.fromParkedMs, 1)} ms against ${fixed(c.rawMs, 1)} ms raw${c.rawFreshMs === undefined ? "" : ` (${fixed(c.rawFreshMs, 1)} ms in a fresh process)`}`);
  return (
    `**Wake from PARKED** (target 6): ${list.join("; ")}. A park gives the sessions' memory back to the system (malloc_trim, native/), so the wake faults it in again page by page while onnxruntime copies the weights into it (once: a parked version keeps onnxruntime's optimised ORT-format form, which the session reads in place); ` +
    "the raw create runs in a process that kept its memory. `bash bench/studies/hugepage-wake.sh` and `npx tsx bench/studies/ort-format-wake.ts` measure those faults and ways to fewer (the section after the lifecycle section)."
  );
}

function background(results: ScenarioResults): string | undefined {
  const { raw } = results;
  const disturbed = (other: number | null | undefined) => (other ?? 0) > DISTURBED_CORES;
  const served = results.served.filter((s) => disturbed(s.cores.other));
  const retried = results.served.filter((s) => (s.attempts ?? 1) > 1).length;
  const rawPoints = [
    ...raw.mlp.points.map((p) => ["mlp", p] as const),
    ...raw.resnet.points.map((p) => ["resnet", p] as const),
    ...raw.worker.mlp.map((p) => ["mlp (worker)", p] as const),
    ...raw.worker.resnet.map((p) => ["resnet (worker)", p] as const),
  ];
  const rawDisturbed = rawPoints.filter(([, p]) => disturbed(p.otherCores));
  const rawRetried = rawPoints.filter(([, p]) => (p.attempts ?? 1) > 1).length;
  const list = (items: string[]) => items.slice(0, 6).join(", ") + (items.length > 6 ? ", …" : "");
  const parts = [
    `**Background load.** A measurement during which other work used more than ${DISTURBED_CORES} cores was taken again (raw points up to twice, served windows once) and the least disturbed attempt kept: ${rawRetried} raw points and ${retried} served windows were repeated.`,
    rawDisturbed.length === 0
      ? "Every raw point kept was undisturbed."
      : `Still disturbed after that, so read them as low (cores of other work in brackets): raw ${list(rawDisturbed.map(([name, p]) => `${name} batch ${p.batch} (${fixed(p.otherCores, 2)})`))}.`,
    served.length === 0
      ? "Every served window kept was undisturbed."
      : `Served windows still disturbed: ${list(served.map((s) => `${s.target} ${s.model} c=${s.concurrency} (${fixed(s.cores.other, 2)})`))}.`,
  ];
  if (raw.recheck) {
    const moved = (again: RawPoint, sweep: RawPoint) => fixed((again.inferPerS / sweep.inferPerS - 1) * 100, 0);
    parts.push(`Re-measured after the served steps, the best raw batches gave mlp ${fixed(raw.recheck.mlp.inferPerS, 0)} infer/s (sweep: ${fixed(raw.mlp.best.inferPerS, 0)}, ${moved(raw.recheck.mlp, raw.mlp.best)} %) and resnet ${fixed(raw.recheck.resnet.inferPerS, 1)} infer/s (sweep: ${fixed(raw.resnet.best.inferPerS, 1)}, ${moved(raw.recheck.resnet, raw.resnet.best)} %): how much the machine itself moved during the run.`);
  }
  return parts.join(" ");
}

function resnet(results: ScenarioResults): string | undefined {
  const served = bestResnetBatched(results, 64);
  const raw = results.raw.resnet;
  if (!served?.server?.avgBatchSize || !served.server.computeUsPerExecution) return undefined;
  const batch = served.server.avgBatchSize;
  const perImageMs = served.server.computeUsPerExecution / 1000 / batch;
  const near = nearestBatch(raw.points, batch);
  const rawPerImageMs = near.runP50Ms / near.batch;
  const single = step(results, "tensorfn", "resnet_single", 64);
  const naive = step(results, "naive", "resnet", 64);
  const notOrt = (served.cores.serverMain ?? 0) + served.cores.self + (served.cores.other ?? 0);
  const parts = [
    `**resnet, served vs raw.** At concurrency 64 the better batched variant (\`${served.model}\`) answered ${fixed(served.inferPerS, 1)} infer/s against ${fixed(raw.best.inferPerS, 1)} raw (${fixed(served.inferPerS / raw.best.inferPerS, 2)}×).`,
    `Queueing is not what limits it: the statistics show batches of ${fixed(batch, 1)} and ${fixed(perImageMs, 1)} ms of compute per image inside the server, against ${fixed(rawPerImageMs, 1)} ms per image in-process at batch ${near.batch} — ORT itself ran ${fixed(perImageMs / rawPerImageMs, 2)}× slower in the server.`,
    `CPU during that window: server ${fixed(served.cores.server, 2)} cores, of which its main thread ${fixed(served.cores.serverMain, 2)} (receiving, decoding and batching 602 kB bodies; batch assembly alone took ${fixed((served.server.computeInputUsPerExecution ?? 0) / 1000, 1)} ms per execution), the client ${fixed(served.cores.self, 2)}, other work ${fixed(served.cores.other, 2)}.`,
  ];
  if (perImageMs / rawPerImageMs > 1.05) {
    parts.push(`The likely reason: ORT's intra-op pool has ${results.machine.nproc} threads for ${results.machine.nproc} cores (cores ÷ instances), so those ${fixed(notOrt, 2)} cores of other activity each take a core from one pool thread while it computes, and a parallel operator waits for its slowest thread; in-process, nothing competes.`);
  }
  const viaWorker = results.raw.worker.resnet.find((p) => p.batch === near.batch) ?? results.raw.worker.resnet.at(-1);
  const rawSame = viaWorker && raw.points.find((p) => p.batch === viaWorker.batch);
  if (viaWorker && rawSame) {
    const share = viaWorker.inferPerS / rawSame.inferPerS;
    const how = `without HTTP, fresh inputs moved to a worker thread ran at ${fixed(viaWorker.inferPerS, 1)} infer/s at batch ${viaWorker.batch}, ${fixed(share, 2)}× the in-process sweep`;
    parts.push(share >= 0.95 ? `The worker path itself is not the cause: ${how}.` : `Part of the gap is the worker path itself: ${how}; serving HTTP alongside accounts for the rest (served = ${fixed(served.inferPerS / viaWorker.inferPerS, 2)}× that).`);
  }
  if (single?.server?.computeUsPerExecution) {
    const rawOne = raw.points.find((p) => p.batch === 1);
    parts.push(`Unbatched (\`resnet_single\`, c=64): ${fixed(single.inferPerS, 1)} infer/s with ${fixed(single.server.computeUsPerExecution / 1000, 1)} ms per run against ${fixed(rawOne?.runP50Ms, 1)} ms raw.`);
  }
  if (naive) parts.push(`The naive server (default ORT options: spinning threads, computing on its event loop) reached ${fixed(naive.inferPerS, 1)} infer/s at c=64 with p99 ${fixed(naive.latencyMs?.p99, 0)} ms.`);
  return parts.join(" ");
}

function mlpGain(results: ScenarioResults): string | undefined {
  const single = step(results, "tensorfn", "mlp_single", 32);
  const batched = bestStaticMlp(results, 32);
  const rawOne = results.raw.mlp.points.find((p) => p.batch === 1);
  if (!single || !batched?.server?.avgBatchSize || !rawOne) return undefined;
  const near = nearestBatch(results.raw.mlp.points, batched.server.avgBatchSize);
  const cpuEach = cpuPerRequest(batched, batched.cores.self + (batched.cores.server ?? 0));
  const naive = step(results, "naive", "mlp", 32);
  const bare = step(results, "bare", "mlp_single", 32);
  const parts = [
    `**mlp, batching gain.** Unbatched, \`mlp_single\` at c=32 answered ${fixed(single.inferPerS, 0)} infer/s: one request per execution at ${fixed((single.server?.computeUsPerExecution ?? NaN) / 1000, 2)} ms each (raw batch 1: ${fixed(rawOne.runP50Ms, 2)} ms/run, ${fixed(rawOne.inferPerS, 0)} infer/s), the rest queueing (${fixed((single.server?.queueUsPerRequest ?? NaN) / 1000, 1)} ms per request).`,
    `Batched, the best static delay (${delayOf(batched.model)} µs) formed batches of ${fixed(batched.server.avgBatchSize, 1)} and answered ${fixed(batched.inferPerS, 0)} infer/s (${fixed(batched.inferPerS / single.inferPerS, 2)}×), far from the ${fixed(near.inferPerS, 0)} infer/s ORT reaches in-process at batch ${near.batch}.`,
    `What caps it is per-request work outside ORT: client and server together spent ${fixed(cpuEach, 0)} µs of CPU per request (client ${fixed(cpuPerRequest(batched, batched.cores.self), 0)}, server main thread ${fixed(cpuPerRequest(batched, batched.cores.serverMain), 0)}, server other threads ${fixed(cpuPerRequest(batched, (batched.cores.server ?? 0) - (batched.cores.serverMain ?? 0)), 0)}), and ${results.machine.nproc} cores ÷ ${fixed(cpuEach, 0)} µs is about ${fixed(cpuEach ? (results.machine.nproc * 1e6) / cpuEach : undefined, 0)} requests/s however large the batches get.`,
  ];
  const workerOne = results.raw.worker.mlp.find((p) => p.batch === 1);
  if (workerOne) parts.splice(1, 0, `Each unbatched execution costs more than a raw run because of the path to the worker: without HTTP, a fresh input moved to a worker thread per run gives ${fixed(workerOne.inferPerS, 0)} infer/s at batch 1 (${fixed(workerOne.runP50Ms, 2)} ms per run, ${fixed(workerOne.inferPerS / rawOne.inferPerS, 2)}× in-process).`);
  if (bare) parts.push(`HTTP as such is not that limit: a bare node:http server given the same 2 kB requests at c=32 answered ${fixed(bare.inferPerS, 0)} req/s on these cores at ${fixed(cpuPerRequest(bare, bare.cores.server), 0)} µs of server CPU per request (tensorfn batched: ${fixed(cpuPerRequest(batched, batched.cores.server), 0)} µs, ORT included; section 3 locates the rest).`);
  if (naive) parts.push(`The naive server managed ${fixed(naive.inferPerS, 0)} infer/s at c=32 (p99 ${fixed(naive.latencyMs?.p99, 1)} ms).`);
  return parts.join(" ");
}

function overhead(results: ScenarioResults): string | undefined {
  const at1 = (target: string, model: string) => step(results, target, model, 1);
  const served = at1("tensorfn", "simple");
  const total = overheadUs(results);
  if (!served?.latencyMs || total === undefined) return undefined;
  const us = (ms: number | undefined) => fixed(ms === undefined ? undefined : ms * 1000, 0);
  const p50 = (s: Measured | undefined) => s?.latencyMs?.p50;
  const cpu = (s: Measured | undefined) => cpuPerRequest(s, s?.cores.server);
  const [bare, noop, echo, naive, identity] = [at1("bare", "simple"), at1("naive", "_noop"), at1("naive", "_echo"), at1("naive", "simple"), at1("tensorfn", "simple_identity")];
  const parts = [`**Per-request overhead.** Served \`simple\` p50 is ${us(p50(served))} µs against ${us(results.raw.simple.p50)} µs for the raw run: ${fixed(total, 0)} µs of overhead. Climbing the ladder of section 3 (p50 / server CPU per request):`];
  if (bare) parts.push(`a bare node:http server takes ${us(p50(bare))} µs / ${fixed(cpu(bare), 0)} µs with the client on the same cores — ${us(p50(bare))} µs of the 150 µs budget is gone before any serving code runs;`);
  if (noop && echo) {
    parts.push(`Hono on @hono/node-server costs ${us(p50(noop))} µs / ${fixed(cpu(noop), 0)} µs when the route does not read the body, but ${us(p50(echo))} µs / ${fixed(cpu(echo), 0)} µs once it awaits \`c.req.arrayBuffer()\` — reading a 200-byte body through the adapter's web-stream bridge costs ${fixed(((p50(echo) ?? NaN) - (p50(noop) ?? NaN)) * 1000, 0)} µs of latency and ${fixed((cpu(echo) ?? NaN) - (cpu(noop) ?? NaN), 0)} µs of CPU per request on this Node ${results.machine.node} (tensorfn's Node adapter reads bodies without that bridge: adapters/node/request-listener.ts);`);
  }
  if (naive) parts.push(`the naive server's \`simple\` (JSON header parse, session.run on its event loop) ${us(p50(naive))} µs / ${fixed(cpu(naive), 0)} µs;`);
  if (identity) parts.push(`tensorfn without a model (\`simple_identity\`) ${us(p50(identity))} µs / ${fixed(cpu(identity), 0)} µs, of which its statistics see ${fixed(identity.server?.requestUsPerRequest, 0)} µs between decoded request and encoded answer;`);
  const execution = `where one execution takes ${fixed(served.server?.computeUsPerExecution, 0)} µs against ${us(results.raw.simple.p50)} µs in-process`;
  parts.push(
    results.placements?.simple === "main"
      ? `and tensorfn \`simple\` ${us(p50(served))} µs / ${fixed(cpu(served), 0)} µs, ${execution}, on the event loop (\`execution_thread\` chose main): the run and the tensor conversions around it (its wait for the turn of the loop on which onnxruntime computes counts as queueing).`
      : `and tensorfn \`simple\` ${us(p50(served))} µs / ${fixed(cpu(served), 0)} µs, ${execution}: the hop to the ORT worker thread and back (a bare postMessage round trip: ${us(results.raw.workerHop.p50)} µs p50 here), waking that thread and ORT's, and tensor conversion on both sides.`,
  );
  return parts.join(" ");
}

function adaptive(results: ScenarioResults): string[] {
  let lawSaid = false;
  return ADAPTIVE_LEVELS.flatMap((c) => {
    const { adaptive: a, bestUnder, bestOverall, underTarget } = adaptiveComparison(results, c);
    if (!a?.latencyMs) return [];
    const parts = [`**Adaptive at c=${c}.** p99 ${fixed(a.latencyMs.p99, 2)} ms (${underTarget ? "under" : "over"} the ${ADAPTIVE_TARGET_MS} ms target), ${fixed(a.inferPerS, 0)} infer/s with batches of ${fixed(a.server?.avgBatchSize, 1)} and ${fixed(a.server?.queueUsPerRequest, 0)} µs queueing per request.`];
    if (bestUnder) parts.push(`The best static delay under the target was ${delayOf(bestUnder.model)} µs: ${fixed(bestUnder.inferPerS, 0)} infer/s, p99 ${fixed(bestUnder.latencyMs?.p99, 2)} ms, batches of ${fixed(bestUnder.server?.avgBatchSize, 1)}, ${fixed(bestUnder.server?.queueUsPerRequest, 0)} µs queueing — adaptive reached ${fixed(a.inferPerS / bestUnder.inferPerS, 2)} of it.`);
    else parts.push("No static delay met the target at this level.");
    if (bestOverall && bestOverall !== bestUnder) parts.push(`The best static delay overall was ${delayOf(bestOverall.model)} µs (${fixed(bestOverall.inferPerS, 0)} infer/s, p99 ${fixed(bestOverall.latencyMs?.p99, 2)} ms); adaptive reached ${fixed(a.inferPerS / bestOverall.inferPerS, 2)} of it.`);
    if (!underTarget && !lawSaid && (lawSaid = true)) parts.push(`The law (runtime/scheduler/dynamic/adaptive-law.ts) holds a request in the queue at most 0.9 × target minus its batch's predicted execution, and sheds one that waiting made late; time outside the queue (reading, decoding, answering, a CPU shared with the client) is not in its hands, and it is what a p99 over the target spent beyond the queue (queueing, the waits for the event loop's turn included, averaged ${fixed(a.server?.queueUsPerRequest, 0)} µs per request here).`);
    const queued = a.server?.queueUsPerRequest ?? 0;
    const bestQueued = bestUnder?.server?.queueUsPerRequest ?? Infinity;
    const rows = a.server?.avgBatchSize ?? 0;
    const bestRows = bestUnder?.server?.avgBatchSize ?? Infinity;
    const missed = bestUnder !== undefined && a.inferPerS < GOALS.adaptiveShare * bestUnder.inferPerS;
    if (missed && rows >= 0.95 * bestRows) {
      // It batches as the winner does or more: the gap is elsewhere, most often in the rounds' spread.
      const alike = sameBatches(results, c, rows);
      const spread = sweepRounds(results, bestUnder.model, c).map((r) => r.inferPerS);
      parts.push(
        `Adaptive formed batches at least as large as the best static delay's (${fixed(rows, 1)} vs ${fixed(bestRows, 1)} rows): it did not lose by batching less` +
          (rows >= 1.5 * bestRows ? `; larger batches did not pay here: the best delay's, ${fixed(rows / bestRows, 1)}× smaller, left as soon as the instance was free, so one group computed while the other clients' answers made their round trips, where the law held each batch for every client it expected back` : "") +
          (alike ? `; the static delay that formed batches closest to its own, ${delayOf(alike.model)} µs (${fixed(alike.server?.avgBatchSize, 1)} rows), answered ${fixed(alike.inferPerS, 0)} infer/s (adaptive ÷ it: ${fixed(a.inferPerS / alike.inferPerS, 2)})` : "") +
          (spread.length > 1 ? `; the best delay's own rounds spanned ${fixed(Math.min(...spread), 0)}–${fixed(Math.max(...spread), 0)} infer/s, and the best of six medians leans high when rounds spread that much.` : "."),
      );
    } else if (missed && queued > bestQueued) {
      parts.push(`Adaptive spent more of the budget waiting (${fixed(queued, 0)} vs ${fixed(bestQueued, 0)} µs per request) without gaining throughput: its law waits for clients it expects back where the server predicts arrivals (a closed loop on Node), else while requests arrive faster than the fitted fixed cost of an execution divided by the rows formed.`);
    }
    const loose = step(results, "tensorfn", "mlp_adaptive_loose", c);
    if (loose) parts.push(`With a looser target of ${ADAPTIVE_LOOSE_TARGET_MS} ms the same controller answered ${fixed(loose.inferPerS, 0)} infer/s (p99 ${fixed(loose.latencyMs?.p99, 2)} ms, batches of ${fixed(loose.server?.avgBatchSize, 1)}, ${fixed(loose.server?.queueUsPerRequest, 0)} µs queueing): ${loose.inferPerS < a.inferPerS ? "more budget bought longer waits, not throughput" : "more budget did not cost throughput here"}.`);
    return [parts.join(" ")];
  });
}

/** The static-delay mlp function whose batches at `concurrency` came closest to `rows`. */
function sameBatches(results: ScenarioResults, concurrency: number, rows: number): Measured | undefined {
  const steps = staticMlpSteps(results, concurrency).filter((s) => s.server?.avgBatchSize !== undefined);
  return steps.reduce<Measured | undefined>((a, b) => (a === undefined || Math.abs(b.server!.avgBatchSize! - rows) < Math.abs(a.server!.avgBatchSize! - rows) ? b : a), undefined);
}

function nearestBatch(points: readonly RawPoint[], batch: number): RawPoint {
  return points.reduce((a, b) => (Math.abs(Math.log(b.batch / batch)) < Math.abs(Math.log(a.batch / batch)) ? b : a));
}
