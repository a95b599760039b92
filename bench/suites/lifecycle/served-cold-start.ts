import { readFileSync } from "node:fs";
import { request } from "undici";
import { median } from "./raw-cold-start.ts";

/** A KServe request body of zeros for a model's metadata (batch 1), binary, and its headers. */
async function zeroRequest(url: string, model: string): Promise<{ body: Uint8Array; headers: Record<string, string> }> {
  const meta = (await (await request(`${url}/v2/models/${model}`)).body.json()) as { inputs: { name: string; datatype: string; shape: number[] }[] };
  const width: Record<string, number> = { INT32: 4, FP32: 4 };
  const inputs = meta.inputs.map((i) => {
    const shape = i.shape.map((d) => (d < 0 ? 1 : d));
    return { name: i.name, datatype: i.datatype, shape, bytes: shape.reduce((a, b) => a * b, 1) * width[i.datatype]! };
  });
  const header = new TextEncoder().encode(
    JSON.stringify({
      inputs: inputs.map(({ name, datatype, shape, bytes }) => ({ name, datatype, shape, parameters: { binary_data_size: bytes } })),
      parameters: { binary_data_output: true },
    }),
  );
  const body = new Uint8Array(header.length + inputs.reduce((n, i) => n + i.bytes, 0));
  body.set(header);
  return { body, headers: { "inference-header-content-length": String(header.length) } };
}

async function post(url: string, path: string, body?: Uint8Array, headers?: Record<string, string>): Promise<number> {
  const res = await request(`${url}${path}`, { method: "POST", body, headers });
  await res.body.arrayBuffer();
  if (res.statusCode !== 200) throw new Error(`${path}: HTTP ${res.statusCode}`);
  return res.statusCode;
}

/**
 * First-response latency of a served function, measured from the client, median of `reps`:
 * from PARKED (`<model>`, `park: host`: the bytes stay in host memory) and from disk
 * (`<model>_disk`, `park: none`: parking unloads, so the next request reads the file again).
 */
export async function servedColdStart(url: string, model: string, reps: number): Promise<{ fromParkedMs: number; fromDiskMs: number }> {
  return { fromParkedMs: await firstResponseAfterPark(url, model, reps), fromDiskMs: await firstResponseAfterPark(url, `${model}_disk`, reps) };
}

/**
 * Median client-side time of the first inference after `POST /v2/repository/models/<name>/park`,
 * over `reps` park-and-call rounds (the function is loaded once first).
 */
export async function firstResponseAfterPark(url: string, name: string, reps: number): Promise<number> {
  const { body, headers } = await zeroRequest(url, name); // loads it once
  const samples: number[] = [];
  for (let i = 0; i < reps; i++) {
    await post(url, `/v2/repository/models/${name}/park`);
    const started = performance.now();
    await post(url, `/v2/models/${name}/infer`, body, headers);
    samples.push(performance.now() - started);
  }
  return median(samples);
}

/** Resident set size of a process, in bytes (Linux). */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}
