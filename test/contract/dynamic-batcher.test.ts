import { DynamicBatcher } from "../../runtime/scheduler/mod.ts";
import { schedulerContract } from "./scheduler-contract.ts";

schedulerContract("DynamicBatcher", (setup) => new DynamicBatcher(setup));
