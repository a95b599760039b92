import { RuntimeError } from "../core/errors.ts";
import type { DataType } from "../core/tensor.ts";

/** Default of `--max-elements`: weighted elements one request may carry, all inputs together. */
export const DEFAULT_MAX_ELEMENTS = 16 * 1024 * 1024;

/**
 * What one BYTES element, or one nested array in JSON `data`, counts against `--max-elements`.
 * A numeric element costs at most 16 bytes while it is decoded (the parsed JS value and its slot
 * in the typed array); a BYTES element or an array is a JS object of about 100 bytes, so 8 × 16.
 */
export const OBJECT_ELEMENT_WEIGHT = 8;

/** One input as the budget sees it, before any of its data is decoded. */
export interface ElementCount {
  name: string;
  datatype: DataType;
  /** Elements it holds (the larger of what its shape and its data say). */
  elements: number;
  /** Nested arrays in its JSON `data` (0 for binary data). */
  arrays?: number;
}

/**
 * Refuses a request whose inputs together weigh more than `maxElements` (RESOURCE_EXHAUSTED →
 * 413), naming the heaviest input. Called after the shapes were checked and before any data is
 * decoded, so what a request may cost in memory is bounded by this, whatever the model accepts.
 */
export function checkElementBudget(inputs: readonly ElementCount[], maxElements: number, limitName = "--max-elements"): void {
  let total = 0;
  let heaviest: { input: ElementCount; weight: number } | undefined;
  for (const input of inputs) {
    const weight = weightOf(input);
    total += weight;
    if (!heaviest || weight > heaviest.weight) heaviest = { input, weight };
  }
  if (total <= maxElements || !heaviest) return;
  const { input } = heaviest;
  const objects = input.datatype === "BYTES" || (input.arrays ?? 0) > 0;
  const why = objects ? ` (a BYTES element or a nested array counts ${OBJECT_ELEMENT_WEIGHT})` : "";
  throw new RuntimeError(
    "RESOURCE_EXHAUSTED",
    `request has too many elements: input '${input.name}' holds ${input.elements} ${input.datatype} elements, ${total} weighted elements in all${why}, more than the limit of ${maxElements} (${limitName})`,
  );
}

function weightOf(input: ElementCount): number {
  const per = input.datatype === "BYTES" ? OBJECT_ELEMENT_WEIGHT : 1;
  return input.elements * per + (input.arrays ?? 0) * OBJECT_ELEMENT_WEIGHT;
}
