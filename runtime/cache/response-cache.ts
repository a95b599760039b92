import { LRUCache } from "lru-cache";
import type { Tensor } from "../core/mod.ts";
import { encodeBinaryTensor } from "../tensor/mod.ts";

/** A reply key's framing: none (JSON) or the binary header's length as a plain byte count. */
const FRAMING = /^[0-9]{0,15}$/;

/**
 * Request parameters that change how a model's answer travels or when it runs, never what it is.
 * Only for a model: an ensemble's step conditions and a handler can read any parameter, so their
 * keys hold every one.
 */
const NOT_IN_KEY = new Set(["binary_data_output", "priority", "timeout"]);

/** What an entry costs beyond its bytes (the entry, its tensors' objects, the LRU's node), charged so that many tiny answers cannot hold far more than the capacity. */
const ENTRY_OVERHEAD = 256;
const TENSOR_OVERHEAD = 128;

/** A BYTES output as the cache keeps it: its elements packed end to end, and where each ends. */
interface PackedBytes {
  datatype: "BYTES";
  shape: number[];
  packed: Uint8Array;
  ends: Uint32Array;
}

type StoredTensor = Tensor | PackedBytes;

/** An answer as the HTTP layer sends it: its headers and encoded body. */
export interface CachedReply {
  headers: Record<string, string>;
  body: Uint8Array;
}

/** What the cache holds for one answer: the model's outputs, in buffers of their own, or an encoded reply. */
interface Entry {
  outputs?: Record<string, StoredTensor>;
  /** Whether any output is packed BYTES (a hit then builds views; otherwise it shares `outputs` as stored). */
  packed?: boolean;
  reply?: CachedReply;
  bytes: number;
}

/** The cache's own figures, for `/metrics`. */
export interface ResponseCacheFigures {
  entries: number;
  bytes: number;
  capacity: number;
  evictions: number;
}

const utf8 = new TextEncoder();

/**
 * Triton's response cache (`response_cache: { enable: true }`, server `--cache-size`): the outputs
 * of answered requests by a SHA-256 of what determines them, least recently used out first, sized
 * by bytes. One per server, shared by every function; each function version reads and writes under
 * its own `scope` (name, version and registration), so a reload or new content never meets the
 * old answers. SHA-256 because a key that two different requests can share would hand one client
 * another's answer: a 64-bit hash can be collided on purpose. Hashing reads each input where it
 * lies (a BYTES tensor is framed into one buffer first).
 */
export class ResponseCache {
  readonly #lru: LRUCache<string, Entry>;
  readonly #capacity: number;
  readonly #sha256Hex?: (chunks: readonly Uint8Array[]) => string;
  #evictions = 0;

  /** `sha256Hex`: the platform's native digest (Platform.sha256Hex), else WebCrypto's is used. */
  constructor(capacityBytes: number, options: { sha256Hex?: (chunks: readonly Uint8Array[]) => string } = {}) {
    this.#capacity = capacityBytes;
    this.#sha256Hex = options.sha256Hex;
    this.#lru = new LRUCache<string, Entry>({
      maxSize: capacityBytes,
      sizeCalculation: (entry, key) => Math.max(1, entry.bytes + key.length),
      dispose: (_entry, _key, reason) => {
        if (reason === "evict") this.#evictions++;
      },
    });
  }

  /**
   * The key of a request under `scope`: every input's name, datatype, shape and bytes, and the
   * request parameters that may change the answer — for a model all but binary_data_output,
   * priority and timeout; with `everyParameter` (an ensemble, a handler: code that can read any
   * of them) all — framed by a header that gives each input's byte length, so no two requests
   * share a message. Computed at once with the platform's native SHA-256; a promise where only
   * WebCrypto's exists.
   */
  key(scope: string, feeds: Record<string, Tensor>, parameters: Record<string, unknown> = {}, options: { everyParameter?: boolean } = {}): string | Promise<string> {
    const names = Object.keys(feeds).sort();
    const data = names.map((name) => dataBytes(feeds[name]!));
    const kept = Object.keys(parameters).filter((p) => options.everyParameter || !NOT_IN_KEY.has(p)).sort().map((p) => [p, parameters[p]]);
    const inputs = names.map((n, i) => [n, feeds[n]!.datatype, feeds[n]!.shape, data[i]!.byteLength]);
    const chunks = [utf8.encode(JSON.stringify([scope, inputs, kept])), ...data];
    const done = (digest: string) => `${scope}\u0000${digest}`;
    return this.#sha256Hex ? done(this.#sha256Hex(chunks)) : webDigest(chunks).then(done);
  }

  /**
   * The cached outputs for `key`, if any: numeric tensors shared by every hit (read-only), BYTES
   * elements as views into the packed copy (a zero-length element is one shared empty view).
   */
  get(key: string): Record<string, Tensor> | undefined {
    const entry = this.#lru.get(key);
    const outputs = entry?.outputs;
    if (!outputs) return undefined;
    if (!entry.packed) return outputs as Record<string, Tensor>;
    const answer: Record<string, Tensor> = {};
    for (const name in outputs) answer[name] = unpack(outputs[name]!);
    return answer;
  }

  /**
   * Ours: the key of a request's exact bytes under `scope` (with `framing`, the header that tells
   * how they are to be read), for its encoded reply: a hit skips decoding, validating and encoding
   * as well as the model. The digest covers the body alone (one native call, every hit pays it);
   * `framing` is kept in the key as it is, between the scope and the digest's fixed 64 digits, so
   * the key still names exactly one (scope, framing, body). Undefined without a native digest
   * (WebCrypto's would cost a thread hop more than the decoding it saves), and for a framing that
   * is not a byte count: such a request is refused, and a long header would make a long key.
   */
  replyKey(scope: string, framing: string, body: Uint8Array): string | undefined {
    if (!this.#sha256Hex || !FRAMING.test(framing)) return undefined;
    return `${scope}\u0000r${framing}\u0000${this.#sha256Hex([body])}`;
  }

  /** The encoded reply kept under a `replyKey`, if any (read-only: every hit shares it). */
  getReply(key: string): CachedReply | undefined {
    return this.#lru.get(key)?.reply;
  }

  /** Keeps a copy of an encoded reply under a `replyKey` (its body may be a view into a larger buffer). */
  setReply(key: string, reply: CachedReply): void {
    const bytes = reply.body.byteLength + JSON.stringify(reply.headers).length + ENTRY_OVERHEAD;
    if (bytes + key.length > this.#capacity) return;
    this.#lru.set(key, { reply: { headers: { ...reply.headers }, body: reply.body.slice() }, bytes });
  }

  /**
   * Keeps a copy of `outputs` under `key`, charged what it holds. Copied because an answer's
   * tensors are views into its batch's output buffers: keeping the views would keep the whole
   * batch alive, uncounted. BYTES outputs are packed into one buffer: an array of one object per
   * element costs ~100 bytes each beyond its data (2 M empty strings: ~200 MB for "8 MB").
   * An answer larger than the whole cache is not kept, nor copied.
   */
  set(key: string, outputs: Record<string, Tensor>): void {
    let bytes = ENTRY_OVERHEAD;
    for (const name in outputs) bytes += storedBytes(outputs[name]!);
    if (bytes + key.length > this.#capacity) return;
    const own: Record<string, StoredTensor> = {};
    for (const name in outputs) own[name] = store(outputs[name]!);
    this.#lru.set(key, { outputs: own, bytes, packed: Object.values(own).some((t) => "packed" in t) });
  }

  /** Drops every answer kept under a scope that starts with `scopePrefix` (a reload, an unload). */
  invalidate(scopePrefix: string): void {
    for (const key of [...this.#lru.keys()]) if (key.startsWith(scopePrefix)) this.#lru.delete(key);
  }

  get figures(): ResponseCacheFigures {
    return { entries: this.#lru.size, bytes: this.#lru.calculatedSize, capacity: this.#capacity, evictions: this.#evictions };
  }
}

/** A tensor's data as bytes: the typed array's own range, or BYTES framed as the binary extension frames them. */
function dataBytes(tensor: Tensor): Uint8Array {
  const data = tensor.data as ArrayBufferView | Uint8Array[];
  if (!Array.isArray(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return encodeBinaryTensor(tensor);
}

/** What a tensor costs the cache once stored: its data (BYTES packed, with an end offset per element) and its objects. */
function storedBytes(tensor: Tensor): number {
  const data = tensor.data as ArrayBufferView | Uint8Array[];
  if (!Array.isArray(data)) return data.byteLength + TENSOR_OVERHEAD;
  let bytes = TENSOR_OVERHEAD + 4 * data.length;
  for (const element of data) bytes += element.byteLength;
  return bytes;
}

/** A tensor copied into buffers of its own: numeric data as one copy, BYTES packed. */
function store(tensor: Tensor): StoredTensor {
  const data = tensor.data as ArrayBufferView | Uint8Array[];
  if (!Array.isArray(data)) return { datatype: tensor.datatype, shape: [...tensor.shape], data: (data as unknown as { slice(): unknown }).slice() } as Tensor;
  const ends = new Uint32Array(data.length);
  let total = 0;
  for (let i = 0; i < data.length; i++) ends[i] = total += data[i]!.byteLength;
  const packed = new Uint8Array(total);
  for (let i = 0, at = 0; i < data.length; at = ends[i++]!) packed.set(data[i]!, at);
  return { datatype: "BYTES", shape: [...tensor.shape], packed, ends };
}

const EMPTY = new Uint8Array(0);

/** A stored tensor as outputs carry it: BYTES elements as views into the packed buffer. */
function unpack(stored: StoredTensor): Tensor {
  if (!("packed" in stored)) return stored;
  const { packed, ends } = stored;
  const elements = new Array<Uint8Array>(ends.length);
  for (let i = 0, at = 0; i < ends.length; at = ends[i++]!) elements[i] = ends[i] === at ? EMPTY : packed.subarray(at, ends[i]);
  return { datatype: "BYTES", shape: stored.shape, data: elements } as Tensor;
}

/** SHA-256 of the chunks with WebCrypto (one buffer: it has no streaming digest), in hex. */
async function webDigest(chunks: readonly Uint8Array[]): Promise<string> {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return hex(new Uint8Array(await crypto.subtle.digest("SHA-256", all)));
}

function hex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}
