import { elementCount } from "../../core/mod.ts";
import type { DataType, Tensor, TensorData } from "../../core/mod.ts";
import { allocate } from "../../tensor/mod.ts";

// The tensors a sequence batcher adds to an execution beyond the requests' own: each sequence's
// implicit state, gathered along the state's batch axis and scattered back after the run, and the
// control inputs that tell the model where each row's sequence stands.

/** One implicit state: the model input it feeds, the output that replaces it, and where its batch dimension lies. */
export interface StateSpec {
  input: string;
  output: string;
  datatype: DataType;
  /** One sequence's shape, without the batch dimension. */
  dims: readonly number[];
  /** Where the model's tensor has its batch dimension (Triton: 0; Silero's state [2, batch, 128]: 1). */
  batchAxis: number;
  /** A sequence's first state (one sequence's elements, row-major); absent: zeros. */
  initial?: TensorData;
}

/** Triton's control-input kinds. */
export type ControlKind = "START" | "END" | "READY" | "CORRID";

/** One control input: its tensor, its kind, and the values that mean false and true (CORRID: the id itself). */
export interface ControlSpec {
  name: string;
  kind: ControlKind;
  datatype: DataType;
  /** [false, true] for START, END, READY. */
  values?: readonly [number, number];
}

/** What a row of an execution is, for its control inputs. */
export interface RowControl {
  start: boolean;
  end: boolean;
  /** The sequence's id: a number, or a string (a string id needs a BYTES CORRID). */
  id: number | string;
}

/** A sequence's first state: its initial value, with a batch dimension of one at the state's axis. */
export function initialState(spec: StateSpec): Tensor {
  const shape = withBatch(spec.dims, spec.batchAxis, 1);
  const data = allocate(spec.datatype, elementCount(shape));
  if (spec.initial) (data as unknown as { set(v: ArrayLike<unknown>): void }).set(spec.initial as ArrayLike<unknown>);
  return { datatype: spec.datatype, shape, data };
}

/** `dims` with a batch dimension of `rows` inserted at `axis`. */
export function withBatch(dims: readonly number[], axis: number, rows: number): number[] {
  return [...dims.slice(0, axis), rows, ...dims.slice(axis)];
}

/**
 * The states of `rows` sequences (each with a batch of one at `axis`) as one tensor with `rows` at
 * that axis: for each index before the axis, the rows' blocks in order.
 */
export function gatherAlong(parts: readonly Tensor[], axis: number): Tensor {
  const first = parts[0]!;
  if (parts.length === 1) return first;
  const outer = elementCount(first.shape.slice(0, axis));
  const inner = elementCount(first.shape.slice(axis + 1));
  const shape = [...first.shape];
  shape[axis] = parts.length;
  const data = allocate(first.datatype, elementCount(shape)) as unknown as { set(v: ArrayLike<unknown>, at: number): void };
  for (let o = 0; o < outer; o++) {
    for (let r = 0; r < parts.length; r++) {
      const source = parts[r]!.data as unknown as { subarray(a: number, b: number): ArrayLike<unknown> };
      data.set(source.subarray(o * inner, (o + 1) * inner), (o * parts.length + r) * inner);
    }
  }
  return { datatype: first.datatype, shape, data: data as unknown as TensorData };
}

/** The inverse of `gatherAlong`: one tensor per row, each with a batch of one at `axis` (copies, kept past the run). */
export function scatterAlong(tensor: Tensor, axis: number): Tensor[] {
  const rows = tensor.shape[axis]!;
  const outer = elementCount(tensor.shape.slice(0, axis));
  const inner = elementCount(tensor.shape.slice(axis + 1));
  const shape = [...tensor.shape];
  shape[axis] = 1;
  const source = tensor.data as unknown as { subarray(a: number, b: number): ArrayLike<unknown> };
  return Array.from({ length: rows }, (_, r) => {
    const data = allocate(tensor.datatype, outer * inner) as unknown as { set(v: ArrayLike<unknown>, at: number): void };
    for (let o = 0; o < outer; o++) data.set(source.subarray((o * rows + r) * inner, (o * rows + r + 1) * inner), o * inner);
    return { datatype: tensor.datatype, shape, data: data as unknown as TensorData };
  });
}

/** A control input for the rows of an execution: shape [rows, 1], Triton's layout. */
export function controlTensor(spec: ControlSpec, rows: readonly RowControl[]): Tensor {
  const data = allocate(spec.datatype, rows.length);
  rows.forEach((row, i) => {
    let value: number | bigint | Uint8Array;
    if (spec.kind === "CORRID") value = typeof row.id === "string" ? new TextEncoder().encode(row.id) : row.id;
    else {
      const on = spec.kind === "START" ? row.start : spec.kind === "END" ? row.end : true;
      value = spec.values![on ? 1 : 0];
    }
    if (Array.isArray(data)) (data as Uint8Array[])[i] = value instanceof Uint8Array ? value : new TextEncoder().encode(String(value));
    else if (data instanceof BigInt64Array || data instanceof BigUint64Array) data[i] = BigInt(value as number);
    else (data as Float32Array)[i] = Number(value);
  });
  return { datatype: spec.datatype, shape: [rows.length, 1], data };
}
