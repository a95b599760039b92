import { streamed } from "../call/mod.ts";
import type { Reply } from "../call/mod.ts";
import type { ApiGroup } from "../call/mod.ts";

/**
 * The groups whose answers are compressed on request: only successful inference answers (and
 * /metrics, which Prometheus inflates), as Triton: its HTTP client for asyncio reads errors,
 * metadata, configuration, statistics and the index without inflating them, while aiohttp asks
 * for gzip on every request.
 */
export const COMPRESSED: ReadonlySet<ApiGroup> = new Set(["inference", "metrics"]);

/**
 * A reply compressed whole when `Accept-Encoding` asks for gzip or deflate, as Triton does,
 * whatever the content type (binary tensors included); an event stream is left as it is (a
 * compressor buffers: events would reach the client late, or never). `Inference-Header-Content-Length`
 * keeps describing the uncompressed body, which is what clients read after inflating. The router
 * calls it for COMPRESSED groups' routes only.
 */
export async function compressReply(reply: Reply, acceptEncoding: string | undefined): Promise<Reply> {
  const encoding = pickEncoding(acceptEncoding);
  if (!encoding || reply.status !== 200 || streamed(reply.body) || reply.headers["content-encoding"] !== undefined) return reply;
  const source = typeof reply.body === "string" ? new TextEncoder().encode(reply.body) : reply.body;
  const compressed = new Response(new Blob([source as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream(encoding)));
  const body = new Uint8Array(await compressed.arrayBuffer());
  return { status: reply.status, headers: { ...reply.headers, "content-encoding": encoding, vary: "Accept-Encoding" }, body };
}

/** gzip or deflate from an Accept-Encoding header, honouring q=0; gzip wins a tie. */
export function pickEncoding(header: string | undefined): "gzip" | "deflate" | undefined {
  if (!header) return undefined;
  const weights = new Map<string, number>();
  for (const part of header.toLowerCase().split(",")) {
    const [token, ...params] = part.trim().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    weights.set(token!.trim(), q ? Number(q.slice(2)) : 1);
  }
  const gzip = weights.get("gzip") ?? 0;
  const deflate = weights.get("deflate") ?? 0;
  if (gzip <= 0 && deflate <= 0) return undefined;
  return gzip >= deflate ? "gzip" : "deflate";
}
