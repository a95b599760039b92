import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// The dashboard's snapshot as someone who asks for it once sees it: rates over a recent window
// (sampled each second whether or not anyone watches), and a lazy function that has never loaded
// shown as COLD while the KServe repository index keeps the protocol's UNAVAILABLE.
describe("dashboard snapshot", () => {
  let server: TestServer;
  let pool: Pool;
  beforeAll(async () => {
    server = await startServer({ repository: tempRepository("simple", "mlp"), dashboard: true, controlMode: "lazy" });
    pool = new Pool(server.url, { connections: 4 });
  }, 90_000);
  afterAll(async () => {
    await pool?.close();
    await server?.close();
  });

  const get = async (path: string) => {
    const res = await pool.request({ method: "GET", path });
    return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
  };
  const row = (snapshot: Record<string, unknown>, name: string) => (snapshot.functions as { name: string; state: string; reqPerS: number; inferPerS: number }[]).find((f) => f.name === name)!;

  it("shows a lazy function that never loaded as COLD (dashboard and /v1/functions); the repository index says UNAVAILABLE", async () => {
    expect(row((await get("/v2/dashboard/snapshot")).json, "mlp").state).toBe("COLD");
    const fns = (await get("/v1/functions")).json.functions as { name: string; versions: { state: string }[] }[];
    expect(fns.find((f) => f.name === "mlp")!.versions[0]!.state).toBe("COLD");
    const res = await pool.request({ method: "POST", path: "/v2/repository/index", body: "{}", headers: { "content-type": "application/json" } });
    const index = (await res.body.json()) as { name: string; state: string }[];
    expect(index.find((e) => e.name === "mlp")!.state).toBe("UNAVAILABLE");
  });

  it("reports the request rate of the last seconds to a reader with no stream open", async () => {
    const body = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) })) });
    const until = Date.now() + 3000;
    let sent = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (Date.now() < until) {
          const res = await pool.request({ method: "POST", path: "/v2/models/simple/infer", body });
          await res.body.dump();
          sent++;
        }
      }),
    );
    const snapshot = (await get("/v2/dashboard/snapshot?window=2")).json;
    expect(snapshot.windowSeconds).toBeGreaterThan(1);
    const simple = row(snapshot, "simple");
    expect(simple.state).toBe("READY");
    // Within the window the clients kept sending, so the rate is most of the run's average.
    expect(simple.reqPerS).toBeGreaterThan((sent / 3) * 0.3);
    expect(simple.inferPerS).toBeGreaterThan(0);
    expect((await get("/v2/dashboard/snapshot?window=0")).status).toBe(400);
    expect((await get("/v2/dashboard/snapshot?window=301")).status).toBe(400);
  });
});
