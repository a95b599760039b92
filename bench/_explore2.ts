import { workerRoundTrip, simpleLatency } from "./scenarios/raw.ts";
console.error(await workerRoundTrip(2000));
console.error(await simpleLatency("functions/simple/1/model.onnx", 2000));
