import { describe, expect, it } from "vitest";
import { formatIssue, parseCores, parsePbtxtConfig } from "../../../runtime/config/mod.ts";
import { declared, issuesOf } from "./_helpers.ts";

// instance_group.host_policy: Triton's name (config.pbtxt, function.yaml) or ours inline.
describe("instance_group.host_policy", () => {
  it("reads config.pbtxt's name, as Triton writes it: the function then runs in a process of its own, which the policy pins", () => {
    const named = parsePbtxtConfig('instance_group [ { count: 2 kind: KIND_CPU host_policy: "batch" } ]', { file: "fn/config.pbtxt", name: "fn" });
    expect(named.errors.map(formatIssue)).toEqual([]);
    expect(named.ignored).toEqual([]);
    expect(named.config!.instance_group[0]!.host_policy).toBe("batch");
    expect(named.config!.isolation).toEqual({ mode: "process", env: {} });
    expect(parsePbtxtConfig("instance_group [ { count: 2 } ]", { file: "fn/config.pbtxt", name: "fn" }).config!.isolation).toBeUndefined();
  });

  it("takes a name or an inline policy in function.yaml, and checks the cores' list", () => {
    expect(declared('isolation: process\ninstance_group: [{ host_policy: { cpu_cores: "0-1,4" } }]\n').instance_group[0]!.host_policy).toEqual({ cpu_cores: "0-1,4" });
    expect(declared("isolation: process\ninstance_group: [{ host_policy: fast }]\n").instance_group[0]!.host_policy).toBe("fast");
    expect(issuesOf('isolation: process\ninstance_group: [{ host_policy: { cpu_cores: "a" } }]\n').join()).toMatch(/host_policy.cpu_cores: must list cores/);
    expect(issuesOf("isolation: process\ninstance_group: [{ host_policy: {} }]\n").join()).toMatch(/names cpu_cores, numa_node or both/);
    expect(parseCores("0-2,5,1")).toEqual([0, 1, 2, 5]);
    expect(parseCores("3-1")).toBeUndefined();
    // A core past MAX_CORE, or one a float cannot count past (a loop over 1e20..1e20+1 never ended).
    expect(parseCores("4096")).toBeUndefined();
    expect(parseCores("100000000000000000000-100000000000000000001")).toBeUndefined();
    expect(issuesOf('isolation: process\ninstance_group: [{ host_policy: { cpu_cores: "100000000000000000000-100000000000000000001" } }]\n').join()).toMatch(/cpu_cores: must list cores from 0 to 4095/);
    expect(issuesOf(`isolation: process\ninstance_group: [{ host_policy: { cpu_cores: "${"0-4095,".repeat(60)}0" } }]\n`).join()).toMatch(/cpu_cores: Too big|cpu_cores: .*256/);
  });
});
