/**
 * `npm run bench:observability [-- --rounds 6 --duration 5s --note "..."]`: what metrics and
 * tracing cost. The same mlp function served twice at concurrency 32 with binary tensors: "off"
 * with tracing off and nobody scraping; "on" with latency histograms, every request traced
 * (`--trace-rate 1`) and a Prometheus-like scrape of /metrics every second. The order alternates
 * (off on, on off, off on…) so neither server always gets the warmer or quieter slot; the section
 * reports every round, the spread of on ÷ off, and a verdict only outside that spread. Target:
 * on ≥ 0.97 × off. Writes bench/results/observability.md and
 * the raw steps to bench/out/observability.json (committed: the section cites it).
 */
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runBench } from "../../adapters/bench/bench-command.ts";
import { summariseObservability } from "./observability-verdict.ts";
import type { ObservabilityRound } from "./observability-verdict.ts";
import { writeResultsSection } from "./results-section.ts";
import { spawnServer } from "../../harness/server-process.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BIN = join(ROOT, "adapters", "node", "bin.mjs");
const TARGET = 0.97;
const log = (line: string) => void process.stderr.write(`${line}\n`);
const { values } = parseArgs({ options: { rounds: { type: "string", default: "6" }, duration: { type: "string", default: "5s" }, note: { type: "string" } } });
const ROUNDS = Number(values.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 2) throw new Error(`--rounds '${values.rounds}' is not an integer of at least 2`);

const repo = mkdtempSync(join(tmpdir(), "tensorfn-observability-"));
cpSync(join(ROOT, "functions", "mlp"), join(repo, "mlp"), { recursive: true });
const common = ["serve", "--repo", repo, "--port", "0", "--model-control-mode", "none"];
const servers = {
  off: await spawnServer("node", [BIN, ...common, "--trace-rate", "0"]),
  on: await spawnServer("node", [BIN, ...common, "--trace-rate", "1", "--metrics-config", "histogram_latencies=true"]),
};

/** One bench step against `which`; the whole step report (latencies, server statistics) is kept. */
async function measure(which: "off" | "on"): Promise<{ inferPerS: number }> {
  const { url } = servers[which];
  const scraper = which === "on" ? setInterval(() => void fetch(`${url}/metrics`).then((r) => r.text()), 1000) : undefined;
  let out = "";
  await runBench([url, "--model", "mlp", "--concurrency", "32", "--binary", "--warmup", "1s", "--duration", values.duration!, "--json"], {
    stdout: async (text) => void (out += text),
    stderr: () => {},
  });
  clearInterval(scraper);
  return JSON.parse(out).steps[0];
}

const rounds: ObservabilityRound[] = [];
const steps: { round: number; server: "off" | "on"; step: unknown }[] = [];
try {
  for (let i = 0; i < ROUNDS; i++) {
    const order: ("off" | "on")[] = i % 2 === 0 ? ["off", "on"] : ["on", "off"];
    log(`observability: round ${i + 1}/${ROUNDS} (${order.join(" then ")})`);
    const got: Partial<Record<"off" | "on", number>> = {};
    for (const which of order) {
      const step = await measure(which);
      steps.push({ round: i + 1, server: which, step });
      got[which] = step.inferPerS;
    }
    rounds.push({ order, off: got.off!, on: got.on! });
  }
} finally {
  await servers.off.stop();
  await servers.on.stop();
}
const summary = summariseObservability(rounds, TARGET);
const results = { date: new Date().toISOString(), note: values.note ?? null, duration: values.duration, target: TARGET, rounds, summary, steps };
mkdirSync(join(ROOT, "bench", "out"), { recursive: true });
writeFileSync(join(ROOT, "bench", "out", "observability.json"), JSON.stringify(results, null, 2) + "\n");

const section = [
  "## Observability: the cost of metrics and tracing",
  "",
  `Reproduce: \`npm run bench:observability\` (${results.date}${values.note ? `; ${values.note}` : ""}). mlp, concurrency 32, binary tensors, 1 s warm-up + ${values.duration}, ${ROUNDS} rounds, the order alternating each round; every step's full report in \`bench/out/observability.json\`.`,
  "",
  "| round | order | off: infer/s | on (histograms, trace rate 1, scrape every 1 s): infer/s | on ÷ off |",
  "|---|---|---|---|---|",
  ...rounds.map((r, i) => `| ${i + 1} | ${r.order.join(", ")} | ${r.off.toFixed(1)} | ${r.on.toFixed(1)} | ${summary.ratios[i]!.toFixed(3)} |`),
  "",
  `${summary.sentence} The statistics behind /metrics are always kept (they are the stats endpoint's); "on" adds the histograms, one trace event per execution and per request, and the scrapes.`,
  "",
].join("\n");
writeResultsSection("observability", section);
log(`observability: on/off ${summary.mean.toFixed(3)} (${summary.min.toFixed(3)}–${summary.max.toFixed(3)}), ${summary.verdict}; wrote bench/results/observability.md`);
process.exit(0);
