import { DynamicBatcher, EnsembleScheduler } from "../../runtime/scheduler/mod.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { schedulerBasicsContract } from "./scheduler-contract.ts";

// The dynamic batcher and the ensemble scheduler answer the same basic contract: here an ensemble
// of one step whose function is the fake instance (through its own batcher, as in a server).
schedulerBasicsContract("EnsembleScheduler", (instance) => {
  const step = new DynamicBatcher({ instances: [instance], maxBatchSize: 1, clock: new FakeClock() });
  return new EnsembleScheduler({
    name: "e",
    steps: [{ model_name: "double", model_version: -1, input_map: { x: "x" }, output_map: { y: "y" } }],
    outputs: ["y"],
    dispatch: (_name, _version, inputs) => step.enqueue({ feeds: inputs, batchSize: inputs.x!.shape[0]!, shapeKey: "x" }),
  });
});
