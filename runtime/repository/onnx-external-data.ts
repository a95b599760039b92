import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { invalidArg } from "../core/mod.ts";

/** One tensor of an ONNX model whose bytes lie in another file (`data_location: EXTERNAL`). */
export interface ExternalReference {
  /** The tensor's name (an initializer's, as ONNX names it). */
  tensor: string;
  /** Its `external_data` `location`, as the model writes it: the key onnxruntime looks up. */
  location: string;
  /** Where its bytes end in that file (`offset` + `length`), where the model says. */
  end?: number;
}

/**
 * Every tensor of an ONNX model (`bytes`: a serialized ModelProto) that keeps its data in another
 * file, wherever ONNX puts a tensor: the graph's initializers and sparse initializers, node
 * attributes (a Constant's value, a tensor list), subgraphs (If, Loop, Scan bodies), functions and
 * training graphs. Read with a protobuf reader that skips every other field, so a 2 GB model costs
 * a walk of its field headers, not a copy. Bytes that are not a model throw INVALID_ARG; nesting
 * past MAX_DEPTH too (onnxruntime bounds it as well).
 */
export function externalDataReferences(bytes: Uint8Array): ExternalReference[] {
  const found: ExternalReference[] = [];
  try {
    walk(bytes, MODEL, found, 0);
  } catch (error) {
    if (error instanceof TooDeep) throw invalidArg(`the model nests subgraphs more than ${MAX_DEPTH} deep`);
    throw invalidArg(`not an ONNX model (${(error as Error).message})`);
  }
  return found;
}

const MAX_DEPTH = 64;

class TooDeep extends Error {}

/** The message types walked, each by the fields that can hold a tensor (onnx.proto's field numbers). */
type Kind = "model" | "graph" | "node" | "attribute" | "function" | "training" | "sparse" | "tensor";
const MODEL: Kind = "model";
const FIELDS: Record<Exclude<Kind, "tensor">, Record<number, Kind>> = {
  model: { 7: "graph", 20: "training", 25: "function" },
  training: { 1: "graph", 2: "graph" },
  graph: { 1: "node", 5: "tensor", 15: "sparse" },
  node: { 5: "attribute" },
  attribute: { 5: "tensor", 6: "graph", 10: "tensor", 11: "graph", 22: "sparse", 23: "sparse" },
  function: { 7: "node", 11: "attribute" },
  sparse: { 1: "tensor", 2: "tensor" },
};

const utf8 = new TextDecoder("utf-8", { fatal: false });
const text = (bytes: Uint8Array) => utf8.decode(bytes.slice()); // a copy: the model may lie in shared memory

function walk(bytes: Uint8Array, kind: Kind, found: ExternalReference[], depth: number): void {
  if (depth > MAX_DEPTH) throw new TooDeep();
  if (kind === "tensor") return tensor(bytes, found);
  const fields = FIELDS[kind];
  const reader = new BinaryReader(bytes, text);
  while (reader.pos < reader.len) {
    const [field, wire] = reader.tag();
    const inner = fields[field];
    if (inner && wire === WireType.LengthDelimited) walk(reader.bytes(), inner, found, depth + 1);
    else reader.skip(wire, field);
  }
}

/** A TensorProto: name (8), external_data (13: key 1, value 2), data_location (14: EXTERNAL = 1). */
function tensor(bytes: Uint8Array, found: ExternalReference[]): void {
  const reader = new BinaryReader(bytes, text);
  let name = "";
  let external = false;
  const entries = new Map<string, string>();
  while (reader.pos < reader.len) {
    const [field, wire] = reader.tag();
    if (field === 8 && wire === WireType.LengthDelimited) name = reader.string();
    else if (field === 14 && wire === WireType.Varint) external = reader.int32() === 1;
    else if (field === 13 && wire === WireType.LengthDelimited) {
      const entry = new BinaryReader(reader.bytes(), text);
      let key = "";
      let value = "";
      while (entry.pos < entry.len) {
        const [f, w] = entry.tag();
        if (f === 1 && w === WireType.LengthDelimited) key = entry.string();
        else if (f === 2 && w === WireType.LengthDelimited) value = entry.string();
        else entry.skip(w, f);
      }
      entries.set(key, value);
    } else reader.skip(wire, field);
  }
  if (!external) return; // onnxruntime reads external_data only where data_location says EXTERNAL
  const location = entries.get("location");
  const offset = Number(entries.get("offset") ?? 0);
  const length = entries.has("length") ? Number(entries.get("length")) : undefined;
  found.push({ tensor: name, location: location ?? "", ...(length !== undefined && Number.isFinite(offset + length) && { end: offset + length }) });
}
