// What `tensorfn` prints for help and version: plain JavaScript that imports no module of the runtime's,
// so that bin.mjs answers `--help` and `--version` without loading the runtime (a start costs
// ~0.4 s of module loading; `tensorfn --help` should cost what `node -e 0` does). cli.ts prints the
// same texts under Bun and Deno. Each command's flags are described in docs/reference/cli.md too.
// It reads no file: bundles of it (the compiled CLI, the Deno package) lie elsewhere. The version
// is handed in: bin.mjs reads the package's, cli.ts has the runtime's (a test holds them equal).
// The ceilings come from their table, plain JavaScript too.
import { LOAD_LIMIT_TABLE, shownDefault } from "../runtime/config/load-limit-table.mjs";

/** The ceilings' flags and defaults, three to a line. */
function ceilings() {
  const items = LOAD_LIMIT_TABLE.map((row) => `${row.flag} ${shownDefault(row)}`);
  const lines = [];
  for (let i = 0; i < items.length; i += 3) lines.push(`  ${items.slice(i, i + 3).join(", ")}`);
  return lines.join(",\n");
}

const SERVE_FLAGS = `
where it listens
  --host 127.0.0.1           address to listen on (0.0.0.0: every interface)
  --port 8000                the HTTP port (0 picks a free one)
  --grpc-port 8001           KServe v2 over gRPC on this port too (absent: no gRPC)
  --metrics-port 8002        /metrics on its own port too
  --http-server bun|node     Bun only: Bun.serve (default) or node:http

when functions load
  --model-control-mode lazy|none|poll|explicit   (default lazy: on first request)
  --load-model <name>        explicit mode: load this one at start (repeatable; * = all)
  --repository-poll-secs 15  poll mode: how often the repository is rescanned
  --load-timeout-secs 120    how long a request waits for an on-demand load
  --idle-timeout-secs N      idle time before a function parks (lazy mode: 300)
  --host-memory-budget 8G    memory budgets (k/M/G): loads that would not fit park, then evict
  --device-memory-budget 16G
  --accelerator auto|cpu|cuda|tensorrt|webgpu|wasm   default for functions that name none
  --modelmesh-root /models   serve ModelMesh's model-runtime API (needs --grpc-port, explicit, a budget)
  --host-policy <name>,cpu-cores=0-3[,numa-node=0]   a policy instance_group.host_policy names (repeatable)
  --strict-readiness true    /v2/health/ready waits for what the control mode loads

requests
  --max-input-size 64M       largest request body (413 past it)
  --max-elements 16M         tensor elements one inference request may carry
  --cache-size 0             bytes of the response cache (functions opt in)
  --rate-limit off|execution_count, --rate-limit-resource <name>:<count>[:<device>] (repeatable)

access
  --api-key-file <file>      bearer keys for the API, one per line
  --admin-key-file <file>    bearer keys for the control routes (repository, trace, dashboard)
  --cors-origin <origin>|*   origins a browser page may call from (repeatable)

connections
  --request-body-timeout 30  seconds a request's head and body may take (408 past it)
  --write-timeout 30         seconds a connection may leave answers untaken before it is dropped
  --max-connections 8192     connections per port (503 past it; health probes still served)
  --max-answer-buffer 256M   answer bytes one gRPC connection may hold unsent
  --shutdown-timeout 30      seconds a SIGTERM drain may take
  --dashboard-max-streams 32 dev dashboard event streams open at once

ceilings on what a config may ask for (400 naming the field and the flag)
${ceilings()}

telemetry
  --metrics-config histogram_latencies=true   latency histograms on /metrics
  --allow-gpu-metrics true   GPU telemetry through NVML where there is one
  --metrics-interval-ms 2000 how often GPUs are read
  --trace-rate 0..1          share of requests traced (serve: 0, dev: 1)
  --trace-file trace.json    the timeline, written at shutdown
  --log-level error|warn|info|debug, --log-format text|json   the log on stderr`;

const CHECK_FLAGS = `
  --no-models                find the models but do not open them (faster; types and dims unchecked)
  --max-instances 64, --max-threads …   the ceilings of tensorfn serve --help, as the server will apply them`;

/** Each command: its synopsis, one line on what it does, and its flags. */
const COMMANDS = {
  dev: {
    synopsis: "tensorfn dev [dir] [serve's flags]",
    summary: "the local dev server on a repository (default ./functions): loads on first request, reloads a function when its files change, serves the dashboard at /",
    flags: `\nthe flags of tensorfn serve (serve --help), but --model-control-mode: dev always loads lazily.`,
  },
  serve: {
    synopsis: "tensorfn serve --repo <dir> [flags]",
    summary: "serves a repository of functions over KServe v2 (HTTP, gRPC) and the OpenAI API; prints its URL once it listens",
    flags: SERVE_FLAGS,
  },
  check: {
    synopsis: "tensorfn check <dir> [--no-models] [ceiling flags]",
    summary: "validates a repository as a load would, opening each model; prints <file>:<line>: <field>: <problem>, exit 1 on any",
    flags: CHECK_FLAGS,
  },
  convert: {
    synopsis: "tensorfn convert <dir>",
    summary: "writes a function.yaml beside each Triton config.pbtxt that has none",
    flags: "",
  },
  init: {
    synopsis: "tensorfn init <dir> [--model <model.onnx> [--handler]]",
    summary: "a new function folder that loads as it is: a TypeScript function, or a model (and a handler around it)",
    flags: `
  --model <model.onnx>       copy this model in as version 1 and write what tensorfn completes from it
  --handler                  with --model: a typed preprocess/postprocess around the model`,
  },
  bench: {
    synopsis: "tensorfn bench <url> --model <m> [flags]",
    summary: "a load generator for a running server (Triton's perf_analyzer's measures)",
    flags: "",
  },
};

/** The commands tensorfn has. */
export const COMMAND_NAMES = Object.keys(COMMANDS);

/** `tensorfn --help`: every command, one line each. */
export function overview(version) {
  const width = Math.max(...COMMAND_NAMES.map((n) => n.length)) + 2;
  return [
    `tensorfn ${version}: serve ONNX models and TypeScript functions (KServe v2, gRPC, OpenAI API)`,
    "",
    "usage: tensorfn <command> [flags]",
    "",
    "commands:",
    ...COMMAND_NAMES.map((name) => `  ${name.padEnd(width)}${COMMANDS[name].summary}`),
    "",
    "tensorfn <command> --help   that command's flags",
    "tensorfn --version          the version",
    "docs: docs/reference/cli.md in the package",
  ].join("\n");
}

/** `tensorfn <command> --help` (bench prints its own). */
export function commandHelp(name) {
  const command = COMMANDS[name];
  return `usage: ${command.synopsis}\n\n${command.summary}\n${command.flags}`.trimEnd();
}

/** `tensorfn <command>`'s synopsis and where its flags are, printed under an error. */
export function seeHelp(name) {
  return name in COMMANDS ? `usage: ${COMMANDS[name].synopsis}   (tensorfn ${name} --help for its flags)` : "tensorfn --help lists the commands";
}

/**
 * The answers that need no runtime: help and version. Returns what to print and the exit code, or
 * undefined for a command to run. `bench --help` is bench's own (its options live with it).
 * @param {string[]} args
 * @param {string} version
 * @returns {{ text: string, code: number, toStderr?: boolean } | undefined}
 */
export function quickAnswer(args, version) {
  const [first, second] = args;
  const asksHelp = (a) => a === "--help" || a === "-h";
  if (first === undefined || asksHelp(first)) return { text: overview(version), code: first === undefined ? 2 : 0, toStderr: first === undefined };
  if (first === "--version" || first === "-v" || first === "version") return { text: version, code: 0 };
  if (first === "help") {
    if (second === undefined) return { text: overview(version), code: 0 };
    if (second in COMMANDS && second !== "bench") return { text: commandHelp(second), code: 0 };
    if (second !== "bench") return unknownCommand(second);
    return undefined;
  }
  if (!(first in COMMANDS)) return unknownCommand(first);
  if (first !== "bench" && args.slice(1).some(asksHelp)) return { text: commandHelp(first), code: 0 };
  return undefined;
}

function unknownCommand(name) {
  const [near] = COMMAND_NAMES.filter((c) => distance(c, name) <= 2).sort((a, b) => distance(a, name) - distance(b, name));
  const hint = name.startsWith("-") ? `an option comes after a command: tensorfn <command> ${name}` : near ? `did you mean '${near}'?` : "";
  return { text: `tensorfn: unknown command '${name}'${hint ? `; ${hint}` : ""}\n${seeHelp("")}`, code: 2, toStderr: true };
}

/** Edit distance, for "did you mean". */
function distance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}
