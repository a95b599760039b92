import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliEntry, startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import { buildFakeNvml } from "../support/fake-nvml.ts";
import { requireTool } from "../support/require-tool.ts";

// Debian's prometheus package (installed by .ci/run): a real Prometheus server scrapes tensorfn on
// 127.0.0.1. Without it the test fails, naming the package (promtool's rules check is in
// prometheus-rules.test.ts, which starts no tensorfn server).

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe("with a real Prometheus", () => {
  let server: TestServer;
  let prometheus: ChildProcess;
  let api = "";

  beforeAll(async () => {
    requireTool("prometheus");
    server = await startServer({ repository: tempRepository("simple"), histogramLatencies: true });
    const dir = mkdtempSync(join(tmpdir(), "tensorfn-prometheus-"));
    const target = new URL(server.url).host;
    writeFileSync(join(dir, "prometheus.yml"), `global: { scrape_interval: 1s }\nscrape_configs:\n  - job_name: tensorfn\n    static_configs: [{ targets: ["${target}"] }]\n`);
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    prometheus = spawn("prometheus", [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`], {
      stdio: "ignore",
    });
  });

  afterAll(async () => {
    prometheus?.kill("SIGTERM");
    await server?.close();
  });

  it("scrapes tensorfn and answers a query on Triton's families", async () => {
    const body = JSON.stringify({
      inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) })),
    });
    for (let i = 0; i < 5; i++) await fetch(`${server.url}/v2/models/simple/infer`, { method: "POST", body });
    const query = encodeURIComponent('nv_inference_request_success{model="simple",version="1"}');
    const deadline = performance.now() + 30_000;
    let result: { value: [number, string] }[] = [];
    while (performance.now() < deadline) {
      const res = await fetch(`${api}/api/v1/query?query=${query}`).catch(() => undefined);
      if (res?.ok) result = (await res.json()).data.result;
      if (result.length > 0 && Number(result[0]!.value[1]) === 5) break;
      await new Promise((resolve) => setTimeout(resolve, 200)); // waits for the scraper, not for our own logic
    }
    expect(result).toHaveLength(1);
    expect(Number(result[0]!.value[1])).toBe(5);
  }, 40_000);
});

describe("the shipped Grafana dashboard", () => {
  it("has the four layers' rows and only queries families a server exposes (GPUs through a fake NVML)", async () => {
    const [command, args] = cliEntry("node", ["serve", "--repo", tempRepository("simple", "word_count"), "--port", "0", "--metrics-config", "histogram_latencies=true"]);
    const server = await spawnServer(command, args, { timeoutMs: 90_000, env: { LD_LIBRARY_PATH: buildFakeNvml() } });
    try {
      const exposed = new Set([...(await (await fetch(`${server.url}/metrics`)).text()).matchAll(/^# TYPE (\w+) (\w+)$/gm)].flatMap(([, name, type]) =>
        type === "histogram" ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!],
      ));
      const dashboard = JSON.parse(readFileSync("deploy/grafana/tensorfn.json", "utf8"));
      const rows = dashboard.panels.filter((p: { type: string }) => p.type === "row").map((p: { title: string }) => p.title.split(":")[0]);
      expect(rows).toEqual(["Infrastructure", "Service health", "Performance", "Cost"]);
      const queried = dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) => (p.targets ?? []).flatMap((t) => [...t.expr.matchAll(/\b((?:nv|tensorfn|process|nodejs)_\w+)/g)].map((m) => m[1])));
      expect(queried.length).toBeGreaterThan(30);
      expect(queried.filter((name: string) => !exposed.has(name))).toEqual([]);
      // The alert rules' families too.
      const rules = readFileSync("deploy/prometheus/alerts.yml", "utf8");
      const alerted = [...rules.matchAll(/\b((?:nv|tensorfn|process|nodejs)_\w+)/g)].map((m) => m[1]!);
      expect(alerted.filter((name) => !exposed.has(name))).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
