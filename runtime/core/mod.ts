export * from "./tensor.ts";
export * from "./errors.ts";
export * from "./clock.ts";
export * from "./platform.ts";
export * from "./inference.ts";
export * from "./model-signature.ts";
export * from "./generation.ts";
export * from "./random.ts";
