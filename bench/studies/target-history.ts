// Issue 11's targets across every `npm run bench` committed so far: each version of
// bench/out/scenarios.json in git history, judged by today's bench/suites/scenarios/targets.ts (so older
// runs get today's checks, target 4's ceiling among them). Which targets a run met moves with the
// VM's spell more than with the code; this table says which have been met at all, and how often.
// Prints two Markdown tables: the runs (with the figures behind targets 2's CPU, 1's worst points and
// 4), then target 1 point by point. `until`: the newest results commit to read (default HEAD), so a
// table quoted in docs/notes/2026-12-scheduling-studies.md reads the same after later runs are committed.
// Usage: tsx bench/studies/target-history.ts [limit=20] [until=HEAD]
import { execFileSync } from "node:child_process";
import { batchingGain, checkTargets, comparePoints } from "../suites/scenarios/targets.ts";
import { cpuPerRequest, fixed, step } from "../suites/scenarios/scenario-results.ts";
import type { ScenarioResults } from "../suites/scenarios/scenario-results.ts";

const limit = Number(process.argv[2] ?? 20);
const until = process.argv[3] ?? "HEAD";
const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
const commits = git("log", `-${limit}`, "--format=%h", until, "--", "bench/out/scenarios.json").trim().split("\n").filter(Boolean);

const rows: string[] = [];
let header: string[] | undefined;
const metCount = new Map<string, number>();
const pointRatios = new Map<string, number[]>();
let judged = 0;
for (const commit of commits) {
  let results: ScenarioResults;
  try {
    results = JSON.parse(git("show", `${commit}:bench/out/scenarios.json`)) as ScenarioResults;
    if (!results.raw || !results.served) continue;
  } catch {
    continue;
  }
  const checks = checkTargets(results);
  // Two checks share id 2, 6 and 7: name them by what they judge.
  const names = checks.map((c, i) => (checks.filter((d) => d.id === c.id).length > 1 ? `${c.id}${"abc"[checks.slice(0, i).filter((d) => d.id === c.id).length]}` : c.id));
  header ??= names;
  judged++;
  checks.forEach((c, i) => c.met && metCount.set(names[i]!, (metCount.get(names[i]!) ?? 0) + 1));
  const points = comparePoints(results);
  for (const p of points) if (p.ratio !== undefined) pointRatios.set(`${p.model} c=${p.concurrency} ${p.encoding}`, [...(pointRatios.get(`${p.model} c=${p.concurrency} ${p.encoding}`) ?? []), p.ratio]);
  const t1 = `${points.filter((p) => p.met).length}/${points.length}`;
  const bare = step(results, "bare", "simple", 1);
  const served = step(results, "tensorfn", "simple", 1);
  const cpu = `${fixed(cpuPerRequest(served, served?.cores.server), 0)} / ${fixed(cpuPerRequest(bare, bare?.cores.server), 0)}`;
  const mlp1 = ["json", "binary"].map((e) => fixed(points.find((p) => p.model === "mlp" && p.concurrency === 1 && p.encoding === e)?.ratio, 2)).join(" / ");
  const g = batchingGain(results).measured;
  const t4 = g ? `${fixed(g.gain, 2)} / ${g.ceiling ? fixed(g.ceiling.reqPerS / g.single.inferPerS, 2) : "n/a"}` : "n/a";
  const commitOf = results.subject?.commit ?? "?";
  rows.push(`| ${commit} | ${commitOf} | ${results.startedAt.slice(0, 16)} | ${fixed(bare?.latencyMs ? bare.latencyMs.p50 * 1000 : undefined, 0)} | ${t1} | ${mlp1} | ${cpu} | ${t4} | ${checks.map((c) => (c.met ? "met" : c.met === false ? "–" : "?")).join(" | ")} | ${checks.filter((c) => c.met).length} |`);
}
if (!header) {
  console.log("no committed run of npm run bench found");
  process.exit(0);
}
console.log(`| results commit | code measured | started (UTC) | bare node:http p50 µs | T1 points | T1 mlp c=1 JSON / binary | T2 CPU µs tensorfn / bare | T4 × / ceiling × | ${header.join(" | ")} | met |`);
console.log(`|---|---|---|---:|---:|---:|---:|---:|${header.map(() => "---").join("|")}|---:|`);
for (const row of rows) console.log(row);
console.log(`| | | | | | | | met in how many of ${judged} runs | ${header.map((n) => String(metCount.get(n) ?? 0)).join(" | ")} | |`);
console.log("");
console.log("| target 1 point | runs | met (≥ 1.0×) | tensorfn ÷ node:http: min / median / max |");
console.log("|---|---:|---:|---|");
for (const [point, ratios] of pointRatios) {
  const sorted = [...ratios].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  console.log(`| ${point} | ${sorted.length} | ${sorted.filter((r) => r >= 1).length} | ${sorted[0]!.toFixed(2)} / ${median.toFixed(2)} / ${sorted.at(-1)!.toFixed(2)} |`);
}
