import { afterEach, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { FUNCTIONS, startServer, TARGET_RUNTIME } from "../../harness/start-server.ts";
import { requireTool } from "../support/require-tool.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// Host policies (Triton's --host-policy and instance_group.host_policy) on functions with
// `isolation: process`: each process pinned to its cores, every thread of it, read back from
// /proc as the kernel has them. This machine has 2 cores: 0 and 1.

const HANDLER = "export function execute(requests) { return requests.map(() => ({ pid: process.pid })); }\n";

/** A handler function `name` in its own process, with `groups` as its instance_group. */
function handlerFunction(repo: string, name: string, groups: string, isolation = "isolation: process"): void {
  mkdirSync(join(repo, name, "1"), { recursive: true });
  writeFileSync(join(repo, name, "handler.ts"), HANDLER);
  writeFileSync(join(repo, name, "function.yaml"), `backend: handler\nhandler: handler.ts\n${isolation}\ninstance_group: ${groups}\n`);
}

/** The cores every thread of `pid` may run on (Cpus_allowed_list), deduplicated. */
function affinities(pid: number): string[] {
  const lists = readdirSync(`/proc/${pid}/task`).map((tid) => /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8"))![1]!);
  return [...new Set(lists)];
}

/** The pid of the function process labelled `label` ("simple v1"), a child of this test process. */
function processOf(label: string): number {
  for (const entry of readdirSync("/proc").filter((e) => /^\d+$/.test(e))) {
    try {
      if (readFileSync(`/proc/${entry}/environ`, "latin1").split("\0").includes(`TENSORFN_PROCESS_LABEL=${label}`)) return Number(entry);
    } catch {
      // gone, or not ours to read
    }
  }
  throw new Error(`no process labelled ${label}`);
}

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function call(name: string): Promise<Response> {
  return fetch(`${server!.url}/v1/functions/${name}`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
}

describe.skipIf(availableParallelism() < 2)("host policies", () => {
  it("pins two functions' processes to disjoint cores, an inline policy and a named one, every thread of each", async () => {
    const repo = tempRepository();
    handlerFunction(repo, "latency", '[{ count: 1, host_policy: { cpu_cores: "0" } }]');
    handlerFunction(repo, "batch", "[{ count: 1, host_policy: batch }]");
    handlerFunction(repo, "free", "[{ count: 1 }]");
    // And a model on onnxruntime: the threads its session starts after the pinning inherit it.
    cpSync(join(FUNCTIONS, "simple"), join(repo, "simple"), { recursive: true });
    appendFileSync(join(repo, "simple", "function.yaml"), "isolation: process\ninstance_group: [{ count: 1, host_policy: batch }]\n");
    server = await startServer({ repository: repo, hostPolicies: { batch: { cpu_cores: "1" } } });

    const pidOf = async (name: string) => ((await (await call(name)).json()) as { pid: number }).pid;
    expect(affinities(await pidOf("latency"))).toEqual(["0"]);
    expect(affinities(await pidOf("batch"))).toEqual(["1"]);
    expect(affinities(await pidOf("free"))).toEqual(affinities(process.pid)); // no policy: what the server has

    const ints = Array.from({ length: 16 }, (_, i) => i);
    const body = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: ints })) });
    expect((await fetch(`${server.url}/v2/models/simple/infer`, { method: "POST", body })).status).toBe(200);
    const simple = processOf("simple v1");
    expect(readdirSync(`/proc/${simple}/task`).length).toBeGreaterThan(1);
    expect(affinities(simple)).toEqual(["1"]);
  }, 120_000);

  // Under Node the process starts under `numactl --membind` (Bun's and Deno's fork build their own command line).
  it.skipIf(TARGET_RUNTIME !== "node")("binds a process's memory to its NUMA node, from its first page (numactl --membind)", async () => {
    requireTool("numactl");
    const repo = tempRepository();
    handlerFunction(repo, "bound", '[{ count: 1, host_policy: { numa_node: 0, cpu_cores: "0" } }]');
    handlerFunction(repo, "unbound", "[{ count: 1 }]");
    server = await startServer({ repository: repo });
    const pidOf = async (name: string) => ((await (await call(name)).json()) as { pid: number }).pid;
    const policies = (pid: number) => new Set(readFileSync(`/proc/${pid}/numa_maps`, "utf8").split("\n").filter(Boolean).map((l) => l.split(" ")[1]));
    const bound = await pidOf("bound");
    expect(policies(bound)).toEqual(new Set(["bind:0"]));
    expect(affinities(bound)).toEqual(["0"]);
    expect(policies(await pidOf("unbound"))).toEqual(new Set(["default"]));
  }, 60_000);

  it("refuses a policy without isolation: process, a name the server lacks and a core the machine lacks, naming the field", async () => {
    const repo = tempRepository();
    handlerFunction(repo, "shared", '[{ count: 1, host_policy: { cpu_cores: "0" } }]', "");
    handlerFunction(repo, "unknown", "[{ count: 1, host_policy: nowhere }]");
    const cpus = availableParallelism();
    handlerFunction(repo, "too_many", '[{ count: 1, host_policy: { cpu_cores: "0-63" } }]');
    handlerFunction(repo, "split", '[{ count: 1, host_policy: { cpu_cores: "0" } }, { count: 1, host_policy: { cpu_cores: "1" } }]');
    handlerFunction(repo, "bad_list", '[{ count: 1, host_policy: { cpu_cores: "3-1" } }]');
    server = await startServer({ repository: repo, hostPolicies: { batch: { cpu_cores: "1" } } });
    const cases: [string, RegExp][] = [
      ["shared", /instance_group\[0\]\.host_policy: pins the function's process: it needs isolation: process/],
      ["unknown", /instance_group\[0\]\.host_policy 'nowhere' is not a policy of this server \(it has batch\)/],
      ["too_many", new RegExp(`instance_group\\[0\\]\\.host_policy names cores ${cpus}, .* \\(${64 - cpus} in all\\), and this machine has cores 0-${cpus - 1}`)],
      ["split", /instance_group\[1\]\.host_policy: differs from another group's/],
      ["bad_list", /cpu_cores: has a range that ends before it starts/],
    ];
    for (const [name, message] of cases) {
      const r = await call(name);
      expect(r.status, name).toBeGreaterThanOrEqual(400);
      expect(((await r.json()) as { error: string }).error, name).toMatch(message);
    }
  }, 120_000);

  it("reads --host-policy as Triton writes it, and refuses a malformed one naming the flag", () => {
    const BIN = new URL("../../adapters/node/bin.mjs", import.meta.url).pathname;
    const cases: [string[], RegExp][] = [
      [["--host-policy", "fast"], /--host-policy 'fast' is not <name>,cpu-cores=<list>\[,numa-node=<n>\]/],
      [["--host-policy", "fast,cores=0"], /--host-policy 'fast,cores=0': 'cores=0' is not cpu-cores=<list> or numa-node=<n>/],
      [["--host-policy", "fast,cpu-cores=one"], /--host-policy fast: cpu-cores must list cores/],
    ];
    for (const [flags, message] of cases) {
      const run = spawnSync("node", [BIN, "serve", "--repo", "functions", "--port", "0", ...flags], { encoding: "utf8" });
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(message);
    }
  });
});
