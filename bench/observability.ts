/**
 * `npm run bench:observability`: what metrics and tracing cost. The same mlp function served twice,
 * measured alternately (A B A B) at concurrency 32 with binary tensors: A with tracing off and
 * nobody scraping; B with latency histograms, every request traced (`--trace-rate 1`) and a
 * Prometheus-like scrape of /metrics every second. Target: B ≥ 0.97 × A. Writes its section of
 * bench/RESULTS.md (between the observability markers) and bench/out/observability.json.
 */
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runBench } from "./bench-command.ts";
import { writeResultsSection } from "./results-section.ts";
import { spawnServer } from "../test/support/spawn-server.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BIN = join(ROOT, "adapters", "node", "bin.mjs");
const log = (line: string) => void process.stderr.write(`${line}\n`);

const repo = mkdtempSync(join(tmpdir(), "tensorfn-observability-"));
cpSync(join(ROOT, "functions", "mlp"), join(repo, "mlp"), { recursive: true });
const common = ["serve", "--repo", repo, "--port", "0", "--model-control-mode", "none"];
const off = await spawnServer("node", [BIN, ...common, "--trace-rate", "0"]);
const on = await spawnServer("node", [BIN, ...common, "--trace-rate", "1", "--metrics-config", "histogram_latencies=true"]);

async function measure(url: string, scrape: boolean): Promise<number> {
  const scraper = scrape ? setInterval(() => void fetch(`${url}/metrics`).then((r) => r.text()), 1000) : undefined;
  let out = "";
  await runBench([url, "--model", "mlp", "--concurrency", "32", "--binary", "--warmup", "1s", "--duration", "5s", "--json"], {
    stdout: async (text) => void (out += text),
    stderr: () => {},
  });
  clearInterval(scraper);
  return JSON.parse(out).steps[0].inferPerS;
}

const rounds: { off: number; on: number }[] = [];
try {
  for (let i = 0; i < 2; i++) {
    log(`observability: round ${i + 1}/2`);
    rounds.push({ off: await measure(off.url, false), on: await measure(on.url, true) });
  }
} finally {
  await off.stop();
  await on.stop();
}
const sum = (pick: (r: { off: number; on: number }) => number) => rounds.reduce((n, r) => n + pick(r), 0);
const ratio = sum((r) => r.on) / sum((r) => r.off);
const results = { date: new Date().toISOString(), rounds, ratio };
mkdirSync(join(ROOT, "bench", "out"), { recursive: true });
writeFileSync(join(ROOT, "bench", "out", "observability.json"), JSON.stringify(results, null, 2));

const section = [
  "## Observability: the cost of metrics and tracing",
  "",
  `Reproduce: \`npm run bench:observability\` (${results.date}). mlp, concurrency 32, binary tensors, 1 s warm-up + 5 s, two rounds alternating the servers.`,
  "",
  "| round | off: infer/s | on (histograms, trace rate 1, scrape every 1 s): infer/s |",
  "|---|---|---|",
  ...rounds.map((r, i) => `| ${i + 1} | ${r.off.toFixed(1)} | ${r.on.toFixed(1)} |`),
  "",
  `On ÷ off over both rounds: **${ratio.toFixed(3)}** (target ≥ 0.97: ${ratio >= 0.97 ? "met" : "**missed**"}). The statistics behind /metrics are always kept (they are the stats endpoint's); "on" adds the histograms, one trace event per execution and per request, and the scrapes.`,
  "",
].join("\n");
writeResultsSection("observability", section);
log(`observability: on/off = ${ratio.toFixed(3)}; wrote bench/RESULTS.md`);
process.exit(0);
