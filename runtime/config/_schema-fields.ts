// The field kinds every section of a function's configuration is built from, in both dialects.
import * as z from "zod";

/**
 * Which text a schema reads: `yaml` is function.yaml (Triton's field names plus our own keys and a
 * few conveniences); `json` is Triton's model-config JSON as `GET /v2/models/{name}/config` prints
 * it and the load-with-override API receives it (protobuf field names, every field present, no
 * conveniences, our own keys absent).
 */
export type Dialect = "yaml" | "json";

/** A message field: an empty YAML value (`dynamic_batching:`) reads as `{}`, as in pbtxt. */
export function message<T extends z.ZodRawShape>(shape: T) {
  return z.preprocess((v) => v ?? {}, z.strictObject(shape));
}

/** A field Triton's JSON always prints and that we accept only at its default value. */
export function onlyDefault(value: unknown) {
  const text = canonical(value);
  return z
    .unknown()
    .optional()
    .refine((v) => v === undefined || canonical(v) === text, { error: () => `only the default ${text} is supported` });
}

/** JSON with object keys sorted, so equal values compare equal whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * An integer field of Triton's ModelConfig (`base` adds bounds): in its JSON form (protobuf's JSON
 * mapping) any integer may be spelt as a decimal string — Triton's own clients send
 * `{"max_batch_size":"16"}` — so the JSON dialect takes both; function.yaml takes numbers.
 */
export function protoInt(dialect: Dialect, base = z.int()): z.ZodType<number> {
  if (dialect === "yaml") return base;
  return z.preprocess((v) => (typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : v), base);
}

export function dims(dialect: Dialect) {
  const dim = protoInt(dialect).refine((d) => d === -1 || d >= 1, {
    error: (iss) => `${String(iss.input)} is not a dimension; use a size ≥ 1, or -1 for a variable one`,
  });
  return dim.array();
}
