// A wake from PARKED, one checkout against another: target 6's cold-start phase of `npm run bench`
// (bench/suites/scenarios/cold-start-phase.ts: mlp and resnet parked, then called, five times each) run for
// each checkout in turn, `rounds` times, so the VM's drift falls on both alike. Each checkout needs
// its node_modules, native/build and the functions' model files (`npm ci` builds them).
// Usage: tsx bench/studies/wake-ab.ts <checkout>[,<checkout>…] [rounds=2]
import { resolve } from "node:path";
import { measureColdStarts } from "../suites/scenarios/cold-start-phase.ts";

const roots = (process.argv[2] ?? ".").split(",").map((root) => resolve(root));
const rounds = Number(process.argv[3] ?? 2);
const functions = resolve("functions");
for (let round = 0; round < rounds; round++) {
  for (const root of roots) {
    const colds = await measureColdStarts(functions, { serverRoot: root, reps: 5, log: () => {} });
    const line = colds.map((c) => `${c.model} from PARKED ${c.fromParkedMs.toFixed(1)} ms${c.weightsInPlace ? " (weights in place)" : ""} (raw ${c.rawMs.toFixed(1)} ms)`).join("; ");
    console.log(`round ${round + 1} ${root}: ${line}`);
  }
}
