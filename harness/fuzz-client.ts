import { TARGET_RUNTIME } from "./start-server.ts";
import { connect } from "node:net";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { Pool } from "undici";
import type { FuzzRequest } from "./fuzz-requests.ts";
import { SIMPLE_OUTPUT0, SIMPLE_OUTPUT1, SIMPLE_REQUEST } from "./fuzz-requests.ts";

/** What came back for one fuzz case: a response, or why none came. */
export interface FuzzOutcome {
  status?: number;
  body?: string;
  contentType?: string;
  /** "timeout" (no answer in time: a hang) or the socket/client error. */
  failure?: string;
  ms: number;
}

/** Sends one case and waits at most `timeoutMs` for the whole answer. */
export async function sendFuzzRequest(pool: Pool, origin: string, req: FuzzRequest, timeoutMs: number): Promise<FuzzOutcome> {
  return req.kind === "raw" ? await sendRaw(origin, req, timeoutMs) : await sendFramed(pool, req, timeoutMs);
}

async function sendFramed(pool: Pool, req: FuzzRequest, timeoutMs: number): Promise<FuzzOutcome> {
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await pool.request({ method: req.method as "POST", path: req.path, headers: req.headers, body: req.body ? Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength) : undefined, signal });
    const bytes = Buffer.from(await res.body.arrayBuffer());
    const encoding = req.method === "HEAD" ? "identity" : String(res.headers["content-encoding"] ?? "identity");
    let body: string;
    try {
      body = decompress(bytes, encoding).toString("utf8");
    } catch (error) {
      return { failure: `response body is not valid ${encoding}: ${(error as Error).message}`, ms: performance.now() - started };
    }
    return { status: res.statusCode, body, contentType: String(res.headers["content-type"] ?? ""), ms: performance.now() - started };
  } catch (error) {
    const e = error as Error & { code?: string };
    return { failure: signal.aborted ? "timeout" : `${e.code ?? e.name}: ${e.message}`, ms: performance.now() - started };
  }
}

function decompress(bytes: Buffer, encoding: string): Buffer {
  if (encoding === "gzip") return gunzipSync(bytes);
  if (encoding === "deflate") return inflateSync(bytes);
  if (encoding === "br") return brotliDecompressSync(bytes);
  return bytes;
}

/**
 * One request written byte for byte over a fresh socket (`Connection: close`); reads until the server
 * closes. No half-close: Node's server drops the pending response of a half-closed socket.
 */
function sendRaw(origin: string, req: FuzzRequest, timeoutMs: number): Promise<FuzzOutcome> {
  const started = performance.now();
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      done({ failure: "timeout" });
    }, timeoutMs);
    let settled = false;
    const done = (o: Omit<FuzzOutcome, "ms">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...o, ms: performance.now() - started });
    };
    socket.on("connect", () => {
      const lines = [`${req.method} ${req.path} HTTP/1.1`, ...Object.entries(req.headers).map(([k, v]) => `${k}: ${v}`)];
      if (req.declaredLength !== undefined) lines.push(`content-length: ${req.declaredLength}`);
      socket.write(Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "utf8"), Buffer.from(req.body ?? new Uint8Array())]));
    });
    socket.on("data", (c: Buffer) => {
      chunks.push(c);
      // Done as soon as one complete final response is in (servers may keep the socket open).
      const complete = completeResponse(Buffer.concat(chunks));
      if (complete) {
        socket.destroy();
        done(parseRaw(complete));
      }
    });
    socket.on("error", (e: Error & { code?: string }) => {
      // A reset after the server answered is fine (it closed with our bytes unread); without an answer it is not.
      if (chunks.length > 0) return done(parseRaw(Buffer.concat(chunks)));
      done(e.code === "ECONNRESET" || e.code === "EPIPE" ? { status: 0, body: "" } : { failure: `${e.code}: ${e.message}` });
    });
    socket.on("close", () => done(chunks.length > 0 ? parseRaw(Buffer.concat(chunks)) : { status: 0, body: "" }));
  });
}

/** The first complete final (non-1xx) response in `bytes`, if there is one yet. */
function completeResponse(bytes: Buffer): Buffer | undefined {
  let start = 0;
  for (;;) {
    const end = bytes.indexOf("\r\n\r\n", start);
    if (end < 0) return undefined;
    const head = bytes.subarray(start, end).toString("latin1");
    if (/^HTTP\/1\.[01] 1\d\d/.test(head)) {
      start = end + 4;
      continue;
    }
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length) return /\r\ntransfer-encoding: *chunked/i.test(head) ? (bytes.includes("\r\n0\r\n\r\n", end) ? bytes.subarray(start) : undefined) : undefined;
    return bytes.byteLength >= end + 4 + Number(length[1]) ? bytes.subarray(start, end + 4 + Number(length[1])) : undefined;
  }
}

function parseRaw(bytes: Buffer): Omit<FuzzOutcome, "ms"> {
  let text = bytes.toString("latin1");
  // Skip interim responses (100 Continue) to the final one.
  while (/^HTTP\/1\.[01] 1\d\d/.test(text) && text.includes("\r\n\r\n")) text = text.slice(text.indexOf("\r\n\r\n") + 4);
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  if (!match) return { failure: `not an HTTP response: ${JSON.stringify(text.slice(0, 80))}` };
  const split = text.indexOf("\r\n\r\n");
  return { status: Number(match[1]), body: split < 0 ? "" : text.slice(split + 4) };
}

/**
 * The property every case must hold; returns why it does not, or undefined.
 * - an answer in time (no hang) and no client-side error;
 * - never a 5xx except 503 (queue full, not ready: a policy, not a failure);
 * - framed cases: every status ≥ 400 carries a JSON `{"error": string}` body (HEAD: no body at all).
 * Raw cases may be refused by the HTTP parser underneath (Node's llhttp answers a bare 400), and a
 * status of 0 means the server closed the socket without an answer, which is fine for broken framing.
 */
export function violation(req: FuzzRequest, o: FuzzOutcome): string | undefined {
  if (o.failure) return o.failure === "timeout" ? `no answer within the timeout (${Math.round(o.ms)} ms): a hang` : `request failed: ${o.failure}`;
  const status = o.status!;
  // A request line with a space in its target reads as a bad HTTP version: Bun's parser answers 505
  // itself, before the app (which never sends 505). That is the runtime's framing, not our failure.
  if (req.kind === "raw" && status === 505 && !(o.body ?? "").includes('"error"')) return undefined;
  if (status >= 500 && status !== 503) return `status ${status} (only 503 is allowed among 5xx): ${o.body?.slice(0, 300)}`;
  if (req.kind === "raw" || status < 400 || req.method === "HEAD") return undefined;
  // A request head over the runtime's header limit (16 KiB) is refused by its HTTP parser before the
  // app sees it. The node:http adapter (Node, Deno) answers it with a JSON error ('clientError');
  // Bun.serve's parser answers a bare 431 we cannot shape.
  if (status === 431 && o.body === "" && TARGET_RUNTIME === "bun") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(o.body ?? "");
  } catch {
    return `status ${status} without a JSON body: ${JSON.stringify(o.body?.slice(0, 200))}`;
  }
  // OpenAI's routes answer errors in OpenAI's shape, so its clients raise their typed errors.
  const error = (parsed as { error?: unknown } | null)?.error;
  if (/^\/v1\/(completions|chat\/completions|embeddings|models)/.test(req.path) && typeof (error as { message?: unknown } | null)?.message === "string") return undefined;
  if (!parsed || typeof parsed !== "object" || typeof error !== "string") {
    return `status ${status} body is not {"error": string}: ${o.body?.slice(0, 200)}`;
  }
  return undefined;
}

/** A short, reproducible description of a case (headers and the body's first bytes, base64 in full if small). */
export function describeCase(req: FuzzRequest): string {
  const body = req.body ?? new Uint8Array();
  const preview = Buffer.from(body.subarray(0, 400)).toString("latin1");
  return [
    `${req.label}`,
    `${req.method} ${req.path.length > 200 ? `${req.path.slice(0, 200)}… (${req.path.length} chars)` : req.path}`,
    ...Object.entries(req.headers).map(([k, v]) => `${k}: ${v}`),
    ...(req.declaredLength !== undefined ? [`content-length (declared): ${req.declaredLength}`] : []),
    `body (${body.byteLength} bytes): ${JSON.stringify(preview)}`,
    ...(body.byteLength <= 4096 ? [`body base64: ${Buffer.from(body).toString("base64")}`] : []),
  ].join("\n  ");
}

/** The server still answers a known inference with the known values (after a fuzz run). */
export async function checkStillCorrect(pool: Pool): Promise<string | undefined> {
  const live = await pool.request({ method: "GET", path: "/v2/health/live", headersTimeout: 10_000 });
  await live.body.text();
  if (live.statusCode !== 200) return `GET /v2/health/live answered ${live.statusCode}`;
  const res = await pool.request({ method: "POST", path: "/v2/models/simple/infer", headers: { "content-type": "application/json", host: "127.0.0.1" }, body: JSON.stringify(SIMPLE_REQUEST), headersTimeout: 10_000 });
  const text = await res.body.text();
  if (res.statusCode !== 200) return `simple answered ${res.statusCode}: ${text}`;
  const outputs = (JSON.parse(text) as { outputs: Array<{ name: string; data: number[] }> }).outputs;
  const o0 = outputs.find((o) => o.name === "OUTPUT0")?.data;
  const o1 = outputs.find((o) => o.name === "OUTPUT1")?.data;
  if (JSON.stringify(o0) !== JSON.stringify(SIMPLE_OUTPUT0) || JSON.stringify(o1) !== JSON.stringify(SIMPLE_OUTPUT1)) return `simple answered wrong values: ${text}`;
  return undefined;
}
