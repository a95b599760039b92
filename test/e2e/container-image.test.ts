import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials, loadPackageDefinition } from "@grpc/grpc-js";
import type { Client, ServiceError } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { packCheckout, ROOT, run } from "../../harness/pack.ts";
import { grpcAddress, spawnServer } from "../../harness/server-process.ts";
import type { SpawnedServer } from "../../harness/server-process.ts";

// The container image without a container engine: the Dockerfile's own install step
// (deploy/container/install.sh, with its default ORT_INSTALL) run into a clean folder, then its
// ENTRYPOINT + CMD and its HEALTHCHECK run as they are — as a user who is not root and cannot write
// the app folder — with the image's paths (/app, /models) mapped to temporary folders, its ports to
// free ones, and 0.0.0.0 to 127.0.0.1. Node only: the image runs Node.

const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
/** A JSON-array instruction of the Dockerfile (exec form), its line continuations joined. */
function instruction(name: string): string[] {
  const text = dockerfile.replace(/\\\n\s*/g, "");
  const match = new RegExp(`^${name}\\s+(?:--\\S+\\s+)*(?:CMD\\s+)?(\\[.*\\])\\s*$`, "m").exec(text);
  if (!match) throw new Error(`the Dockerfile has no ${name} in exec form`);
  return JSON.parse(match[1]!) as string[];
}
const ortInstall = /^ARG ORT_INSTALL=(\S+)$/m.exec(dockerfile)![1]!;
// As root (CI here), each step runs as nobody through setpriv; as anyone else, as that user.
const AS_ROOT = process.getuid?.() === 0;
const NOBODY = ["--reuid=65534", "--regid=65534", "--clear-groups"];
/** A command as the non-root user: [command, args]. */
const asUser = (command: string[]): [string, string[]] => (AS_ROOT ? ["setpriv", [...NOBODY, "--", ...command]] : [command[0]!, command.slice(1)]);

describe("the container image's steps, as a non-root user", () => {
  let work: string;
  let app: string;
  let models: string;
  let server: SpawnedServer | undefined;
  const ports = new Map<string, string>();

  beforeAll(() => {
    const { dir, tarball } = packCheckout();
    work = dir;
    chmodSync(work, 0o755);
    app = join(work, "app");
    run("sh", [join(ROOT, "deploy/container/install.sh"), tarball, app], work, { ONNXRUNTIME_NODE_INSTALL: ortInstall, npm_config_prefer_offline: "true" });
    models = mkdtempSync(join(tmpdir(), "tensorfn-models-"));
    for (const name of ["simple", "word_count"]) cpSync(join(ROOT, "functions", name), join(models, name), { recursive: true });
    for (const dir of [models]) run("chmod", ["-R", "a+rX", dir], work);
  }, 300_000);

  afterAll(async () => {
    await server?.stop();
    for (const dir of [work, models]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** An image path or port as it is here. */
  const mapped = (arg: string) => (ports.get(arg) ?? arg.replace(/^\/app(?=\/|$)/, app).replace(/^\/models$/, models).replace(/^0\.0\.0\.0$/, "127.0.0.1"));

  it("installs, starts from ENTRYPOINT + CMD as nobody, and serves HTTP, gRPC and metrics", async () => {
    for (const port of ["8000", "8001", "8002"]) ports.set(port, "0");
    const command = [...instruction("ENTRYPOINT"), ...instruction("CMD")].map(mapped);
    expect(command).toContain("--grpc-port");
    server = await spawnServer(...asUser(command), { cwd: app, env: { HOME: "/nonexistent" } });
    await server.waitFor(/tensorfn metrics at \S+/);
    // From the CLI compiled at install: a start from the TypeScript sources is ~0.8 s slower.
    expect(server.output()).not.toMatch(/could not be compiled ahead/);
    const whoami = spawnSync("ps", ["-o", "user=", "-p", String(server.pid)], { encoding: "utf8" }).stdout.trim();
    if (AS_ROOT) expect(["nobody", "65534"]).toContain(whoami);
    else expect(whoami).not.toBe("root");

    const infer = await fetch(`${server.url}/v2/models/simple/infer`, {
      method: "POST",
      body: JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) })) }),
    });
    expect(((await infer.json()) as { outputs: { data: number[] }[] }).outputs[0]!.data[3]).toBe(6);
    const words = await fetch(`${server.url}/v1/functions/word_count`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: "a b a" }) });
    expect(await words.json()).toEqual({ words: 3, longest: "a" });
    const metrics = /tensorfn metrics at (\S+)/.exec(server.output())![1]!;
    expect((await fetch(metrics)).status).toBe(200);

    const address = await grpcAddress(server);
    const definition = loadSync("grpc_service.proto", { includeDirs: [join(ROOT, "runtime/grpc/proto"), join(ROOT, "runtime/config/proto")], keepCase: true });
    const Service = (loadPackageDefinition(definition) as unknown as { inference: { GRPCInferenceService: new (a: string, c: ReturnType<typeof credentials.createInsecure>) => Client } }).inference.GRPCInferenceService;
    const client = new Service(address, credentials.createInsecure()) as Client & { ServerReady(r: object, cb: (e: ServiceError | null, v: { ready: boolean }) => void): void };
    expect(await new Promise((resolve, reject) => client.ServerReady({}, (e, v) => (e ? reject(e) : resolve(v))))).toEqual({ ready: true });
    client.close();
  });

  it("answers the HEALTHCHECK as it runs in the image", () => {
    const port = new URL(server!.url).port;
    const check = instruction("HEALTHCHECK").map((arg) => arg.replace("127.0.0.1:8000", `127.0.0.1:${port}`));
    expect(check.join(" ")).toContain(`127.0.0.1:${port}/v2/health/live`);
    const result = spawnSync(...asUser(check), { encoding: "utf8" });
    expect(result.status, result.stderr).toBe(0);
  });

  it("keeps the app folder out of the server's reach, and stops on SIGTERM with exit 0", async () => {
    if (AS_ROOT) {
      const write = spawnSync(...asUser(["sh", "-c", `echo x > '${join(app, "node_modules", "tensorfn", "probe")}'`]), { encoding: "utf8" });
      expect(write.status).not.toBe(0);
    }
    expect(await server!.stop()).toBe(0);
    server = undefined;
  });
});
