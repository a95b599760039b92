import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { Ajv } from "ajv";
import { Deployment } from "kubernetes-models/apps/v1";
import { Service } from "kubernetes-models/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { Service as KnativeService } from "@kubernetes-models/knative/serving.knative.dev/v1";
import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1";
import { SERVE_OPTIONS } from "../../../adapters/cli-flags.ts";

// deploy/kubernetes, validated offline: every document a kustomization gathers against the
// Kubernetes schemas (kubernetes-models), Knative's and KEDA's (@kubernetes-models) — types,
// required fields, enums; those packages' validators let unknown fields pass — and KServe's CRDs'
// own OpenAPI schemas (test/fixtures/kubernetes, with ajv), strictly: a field the schema does not
// know fails, as `kubectl apply --validate=strict` would. Then what ties them to the server: flags
// the CLI knows, probes on the v2 health routes, a grace period that covers the drain.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const DEPLOY = join(ROOT, "deploy/kubernetes");
type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The kustomizations (folders with a kustomization.yaml) under deploy/kubernetes. */
function kustomizations(dir = DEPLOY): string[] {
  const own = existsSync(join(dir, "kustomization.yaml")) ? [dir] : [];
  return [...own, ...readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? kustomizations(join(dir, name)) : []))];
}

/** What `kustomize build` gives for these kustomizations, which only list resources (checked below). */
function build(dir: string): { file: string; doc: Doc }[] {
  const kustomization = readYaml(join(dir, "kustomization.yaml"))[0]!;
  expect(Object.keys(kustomization).sort(), relative(ROOT, dir)).toEqual(["apiVersion", "kind", "resources"]);
  return (kustomization.resources as string[]).flatMap((entry) => {
    const path = resolve(dir, entry);
    return statSync(path).isDirectory() ? build(path) : readYaml(path).map((doc) => ({ file: relative(ROOT, path), doc }));
  });
}

function readYaml(path: string): Doc[] {
  return parseAllDocuments(readFileSync(path, "utf8")).map((d) => {
    expect(d.errors, path).toEqual([]);
    return d.toJS() as Doc;
  });
}

// KServe's CRD schemas, strict: an object that lists its properties takes no others.
const crdSchemas = JSON.parse(readFileSync(join(ROOT, "test/fixtures/kubernetes/crd-schemas.json"), "utf8")) as Record<string, Doc>;
function strict(schema: Doc): Doc {
  if (Array.isArray(schema)) return schema.map(strict);
  if (!schema || typeof schema !== "object") return schema;
  const out: Doc = {};
  for (const [key, value] of Object.entries(schema)) if (!key.startsWith("x-kubernetes-")) out[key] = strict(value);
  if (schema.properties && schema.additionalProperties === undefined && !schema["x-kubernetes-preserve-unknown-fields"]) out.additionalProperties = false;
  if (schema["x-kubernetes-int-or-string"]) return { anyOf: [{ type: "integer" }, { type: "string" }] };
  return out;
}
const ajv = new Ajv({ allErrors: true, strict: false });
const crdValidators = new Map(Object.entries(crdSchemas).map(([key, schema]) => [key, ajv.compile(strict(schema))]));

/** Problems of one document against its kind's schema ([] when it validates). */
function problems(doc: Doc): string[] {
  const key = `${doc.apiVersion}/${doc.kind}`;
  const models: Record<string, new (d: Doc) => { validate(): void }> = {
    "apps/v1/Deployment": Deployment,
    "v1/Service": Service,
    "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
    "serving.knative.dev/v1/Service": KnativeService,
    "keda.sh/v1alpha1/ScaledObject": ScaledObject as unknown as new (d: Doc) => { validate(): void },
  };
  const Model = models[key];
  if (Model) {
    try {
      new Model(doc).validate();
      return [];
    } catch (error) {
      return [(error as Error).message];
    }
  }
  const validate = crdValidators.get(key);
  if (!validate) return [`no schema for ${key}`];
  return validate(doc) ? [] : validate.errors!.map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

const all = kustomizations().map((dir) => ({ dir: relative(ROOT, dir), docs: build(dir) }));
const containers = (doc: Doc): Doc[] => doc.spec?.template?.spec?.containers ?? doc.spec?.containers ?? [];

describe("deploy/kubernetes", () => {
  it("has the kustomizations the guide names", () => {
    expect(all.map((k) => k.dir).sort()).toEqual(["deploy/kubernetes/base", "deploy/kubernetes/knative", "deploy/kubernetes/kserve", "deploy/kubernetes/modelmesh", "deploy/kubernetes/overlays/hpa", "deploy/kubernetes/overlays/keda"]);
  });

  it("validates every document against its schema", () => {
    const found = all.flatMap(({ docs }) => docs.flatMap(({ file, doc }) => problems(doc).map((p) => `${file} ${doc.kind}: ${p}`)));
    expect(found).toEqual([]);
    expect(new Set(all.flatMap(({ docs }) => docs.map(({ doc }) => doc.kind)))).toEqual(
      new Set(["Deployment", "Service", "HorizontalPodAutoscaler", "ScaledObject", "ClusterServingRuntime", "ServingRuntime", "InferenceService"]),
    );
  });

  it("catches a wrong value in each kind of schema, and a misspelt field in KServe's", () => {
    const base = build(join(DEPLOY, "base"));
    const deployment = structuredClone(base.find((d) => d.doc.kind === "Deployment")!.doc);
    deployment.spec.template.spec.containers[0].readinessProbe.periodSeconds = "often";
    expect(problems(deployment).join()).toMatch(/periodSeconds/);
    const knative = structuredClone(build(join(DEPLOY, "knative"))[0]!.doc);
    knative.spec.template.spec.containers[0].ports[0].containerPort = "8080";
    expect(problems(knative)).not.toEqual([]);
    const runtime = structuredClone(build(join(DEPLOY, "kserve")).find((d) => d.doc.kind === "ClusterServingRuntime")!.doc);
    runtime.spec.supportedModelFormat = runtime.spec.supportedModelFormats;
    expect(problems(runtime).join()).toMatch(/supportedModelFormat/);
    const isvc = structuredClone(build(join(DEPLOY, "kserve")).find((d) => d.doc.kind === "InferenceService")!.doc);
    isvc.spec.predictor.minReplica = 0;
    expect(problems(isvc).join()).toMatch(/minReplica/);
    const scaled = structuredClone(build(join(DEPLOY, "overlays/keda")).find((d) => d.doc.kind === "ScaledObject")!.doc);
    scaled.spec.minReplicaCount = "one";
    expect(problems(scaled)).not.toEqual([]);
  });

  it("runs the server with flags the CLI knows, probes on the v2 health routes, and a grace period that covers the drain", () => {
    const flags = Object.keys(SERVE_OPTIONS);
    for (const { docs } of all) {
      for (const { file, doc } of docs) {
        for (const container of containers(doc)) {
          const args = container.args as string[];
          expect(args[0], file).toBe("serve");
          for (const arg of args.slice(1)) {
            const flag = /^--([a-z-]+)=/.exec(arg)?.[1];
            expect(flag, `${file}: ${arg}`).toBeDefined();
            expect(flags, `${file}: --${flag} is not a serve flag`).toContain(flag);
          }
          for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
            const path = container[probe]?.httpGet?.path;
            if (path !== undefined) expect(path, `${file} ${probe}`).toMatch(probe === "livenessProbe" ? /^\/v2\/health\/live$/ : /^\/v2\/health\/ready$/);
          }
        }
      }
    }
    const deployment = build(join(DEPLOY, "base")).find((d) => d.doc.kind === "Deployment")!.doc;
    const container = containers(deployment)[0]!;
    const shutdown = Number(/^--shutdown-timeout=(\d+)$/.exec((container.args as string[]).find((a) => a.startsWith("--shutdown-timeout="))!)![1]);
    const pause = Number(container.lifecycle.preStop.exec.command[1]);
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(shutdown + pause);
    const metricsPort = Number(/^--metrics-port=(\d+)$/.exec((container.args as string[]).find((a) => a.startsWith("--metrics-port="))!)![1]);
    expect(Number(deployment.spec.template.metadata.annotations["prometheus.io/port"])).toBe(metricsPort);
    expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(deployment.spec.template.spec.securityContext.runAsUser).toBe(Number(/USER (\d+)/.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"))![1]));
  });

  it("gives ModelMesh's runtime the endpoints and the capacity tensorfn serves: both APIs on its gRPC port, the memory request as budget", () => {
    const runtime = build(join(DEPLOY, "modelmesh")).find((d) => d.doc.kind === "ServingRuntime")!.doc;
    const container = containers(runtime)[0]!;
    const arg = (flag: string) => (container.args as string[]).find((a) => a.startsWith(`--${flag}=`))?.split("=")[1];
    expect(runtime.spec.multiModel).toBe(true);
    expect(runtime.spec.grpcEndpoint).toBe(`port:${arg("grpc-port")}`);
    expect(runtime.spec.grpcDataEndpoint).toBe(runtime.spec.grpcEndpoint);
    expect(arg("modelmesh-root")).toBe("/models"); // the puller's ROOT_MODEL_DIR
    expect(arg("model-control-mode")).toBe("explicit");
    const budget = /^\$\((\w+)\)M$/.exec(arg("host-memory-budget")!)![1];
    expect(container.env.find((e: Doc) => e.name === budget).valueFrom.resourceFieldRef).toEqual({ containerName: container.name, resource: "requests.memory", divisor: "1Mi" });
    const isvc = build(join(DEPLOY, "modelmesh")).find((d) => d.doc.kind === "InferenceService")!.doc;
    expect(isvc.metadata.annotations["serving.kserve.io/deploymentMode"]).toBe("ModelMesh");
    expect(isvc.spec.predictor.model.runtime).toBe(runtime.metadata.name);
  });
});
