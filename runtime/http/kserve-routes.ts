import type { Context, Hono } from "hono";
import { elementCount, invalidArg } from "../core/mod.ts";
import type { InferRequest } from "../core/mod.ts";
import { toTritonJson } from "../config/mod.ts";
import type { FunctionConfig, TensorConfig } from "../config/mod.ts";
import {
  byteSize,
  checkElementBudget,
  DEFAULT_MAX_ELEMENTS,
  decodeInferRequest,
  decodeRawBinaryRequest,
  encodeInferResponse,
  fromConfigType,
} from "../tensor/mod.ts";
import type { RequestHeader } from "../tensor/mod.ts";
import type { Deployment, ModelManager } from "../lifecycle/mod.ts";
import { jsonError } from "./error-status.ts";
import { readBody, refuseDeclaredOversize } from "./read-body.ts";
import type { ServeEnv } from "./direct-body.ts";

/** What the KServe routes need from the runtime. */
export interface KserveContext {
  models: ModelManager;
  server: { name: string; version: string; extensions: string[] };
  /** Largest accepted request body, compressed or inflated (`--max-input-size`). */
  maxInputBytes: number;
  /** Weighted elements one request may carry (`--max-elements`; see `checkElementBudget`). */
  maxElements?: number;
  /** True once a shutdown began: readiness answers 503 so load balancers stop sending. */
  draining?: () => boolean;
}

const MODEL = "/v2/models/:name";
const VERSION = "/v2/models/:name/versions/:version{[0-9]+}";

/** KServe v2 core routes plus Triton's model-configuration extension. */
export function registerKserveRoutes(app: Hono, ctx: KserveContext): void {
  app.get("/v2", (c) => c.json(ctx.server));
  app.get("/v2/health/live", (c) => c.json({ live: true }));
  app.get("/v2/health/ready", (c) =>
    ctx.draining?.()
      ? jsonError(503, "Server not ready: shutting down")
      : ctx.models.allReady()
        ? c.json({ ready: true })
        : jsonError(503, "Server not ready: not every model is ready; see POST /v2/repository/index"),
  );

  // Triton's statistics extension. Registered before /v2/models/:name so "stats" is not a model.
  app.get("/v2/models/stats", (c) => c.json(statistics(ctx)));
  app.get(`${MODEL}/stats`, (c) => c.json(statistics(ctx, c.req.param("name"))));
  app.get(`${VERSION}/stats`, (c) => c.json(statistics(ctx, c.req.param("name"), c.req.param("version"))));

  for (const base of [MODEL, VERSION]) {
    app.get(base, async (c) => c.json(metadata(await deployment(c, ctx), ctx)));
    app.get(`${base}/ready`, (c) => {
      const name = c.req.param("name")!;
      const r = ctx.models.readiness(name, c.req.param("version"));
      if (!r.ready) return jsonError(503, `model '${name}' version ${r.version} is not ready: ${r.reason}`);
      return c.json({ name, version: String(r.version), ready: true });
    });
    app.get(`${base}/config`, async (c) => c.json(effectiveConfig(await deployment(c, ctx))));
    app.post(`${base}/infer`, async (c) => {
      // Cheapest refusals first, all before the body is read: its declared size, the function and
      // version (404), the rate limit (429), room in the queue (503). Then read, check the header
      // against the model and the element budget, and only then decode tensor data.
      const name = c.req.param("name")!;
      const version = c.req.param("version");
      // On Node the adapter hands over the socket's body (and a signal) directly: touching
      // `c.req.raw.signal` or its body would build the web-stream bridge this skips.
      const direct = (c.env as ServeEnv | undefined)?.directBody;
      const signal = direct?.signal ?? c.req.raw.signal;
      await refuseDeclaredOversize(c.req.raw, ctx.maxInputBytes, direct);
      ctx.models.admit(name, version, (header) => c.req.header(header));
      const d = await deployment(c, ctx, signal);
      d.checkRoom();
      const body = await readBody(c.req.raw, ctx.maxInputBytes, direct);
      const request = decode(body, c.req.header("inference-header-content-length"), d, ctx.maxElements ?? DEFAULT_MAX_ELEMENTS);
      const response = await ctx.models.infer(name, version, request, { signal });
      const encoded = encodeInferResponse(response, request);
      if (encoded.headerLength === undefined) {
        return new Response(encoded.body, { headers: { "content-type": "application/json" } });
      }
      return new Response(encoded.body, {
        headers: {
          "content-type": "application/octet-stream",
          "inference-header-content-length": String(encoded.headerLength),
        },
      });
    });
  }
}

/** Triton's statistics, plus our state and instance count per version (extra keys clients ignore). */
function statistics(ctx: KserveContext, name?: string, version?: string) {
  return {
    model_stats: ctx.models.statistics(name, version).map((e) => ({ ...e.stats.toJSON(e.name, e.version), state: e.state, instance_count: e.instances })),
  };
}

/** The deployment a request names, loaded on demand (lazy mode, or a parked function). */
function deployment(c: Context, ctx: KserveContext, signal = c.req.raw.signal): Promise<Deployment> {
  return ctx.models.acquire(c.req.param("name")!, c.req.param("version"), { signal });
}

function decode(body: Uint8Array, header: string | undefined, d: Deployment, maxElements: number): InferRequest {
  const check = (h: RequestHeader) => d.checkRequest(h);
  if (header === undefined) return decodeInferRequest(body, { check, maxElements });
  if (!/^[0-9]+$/.test(header.trim())) throw invalidArg(`Inference-Header-Content-Length '${header}' is not a byte count`);
  const headerLength = Number(header);
  if (headerLength > 0) return decodeInferRequest(body, { headerLength, check, maxElements });
  const input = rawInput(d.config, body.byteLength);
  checkElementBudget([{ name: input.name, datatype: input.datatype, elements: elementCount(input.shape) }], maxElements);
  return decodeRawBinaryRequest(body, input);
}

/**
 * The single input a raw binary request (header length 0) fills: batch 1, and the one variable
 * dimension, if any, resolved from the body size.
 */
function rawInput(config: FunctionConfig, bytes: number) {
  if (config.input.length !== 1) {
    throw invalidArg(`raw binary requests (Inference-Header-Content-Length: 0) need a model with exactly one input; '${config.name}' has ${config.input.length}`);
  }
  const input = config.input[0]!;
  const datatype = fromConfigType(input.data_type);
  const dims = config.max_batch_size > 0 ? [1, ...input.dims] : [...input.dims];
  if (datatype === "BYTES") {
    if (dims.some((d) => d !== 1 && d !== -1)) throw invalidArg(`raw binary BYTES input '${input.name}' must have shape [1]`);
    return { name: input.name, datatype, shape: dims.map(() => 1) };
  }
  const variable = dims.filter((d) => d === -1).length;
  if (variable > 1) throw invalidArg(`raw binary input '${input.name}' has more than one variable dimension`);
  const known = dims.reduce((n, d) => (d === -1 ? n : n * d), 1);
  const elements = bytes / byteSize(datatype);
  return { name: input.name, datatype, shape: dims.map((d) => (d === -1 ? elements / known : d)) };
}

function metadata(d: Deployment, ctx: KserveContext) {
  const { config } = d;
  const batch = config.max_batch_size > 0 ? [-1] : [];
  const tensor = (t: TensorConfig) => ({
    name: t.name,
    datatype: fromConfigType(t.data_type),
    shape: [...batch, ...t.dims],
  });
  return {
    name: d.name,
    versions: ctx.models.versions(d.name),
    platform: config.platform || config.backend,
    inputs: config.input.map(tensor),
    outputs: config.output.map(tensor),
    parameters: {
      state: "READY",
      instance_count: d.instanceCount,
      execution_provider: d.provider,
      // `auto`'s choice (main = on the event loop), when the backend places sessions.
      ...(config.parameters.execution_thread && { execution_thread: config.parameters.execution_thread.string_value }),
    },
  };
}

/** Triton's JSON form, with the execution provider actually in use among the parameters. */
function effectiveConfig(d: Deployment) {
  const json = toTritonJson(d.config) as { parameters: Record<string, { string_value: string }> };
  json.parameters = { ...json.parameters, execution_provider: { string_value: d.provider } };
  if (d.fallbackReason) json.parameters.execution_provider_fallback = { string_value: d.fallbackReason };
  return json;
}
