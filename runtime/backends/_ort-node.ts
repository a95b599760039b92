import * as ort from "onnxruntime-node";
import type { OrtModule } from "./_ort-session.ts";

// ORT reports every failure we care about as an exception, which we log with the function's name;
// its own stderr lines (e.g. a missing CUDA library during the `auto` probe) only duplicate them.
ort.env.logLevel = "fatal";

/** onnxruntime-node, for the in-process backend and the worker threads. */
export const ortNode: OrtModule = ort as unknown as OrtModule;
