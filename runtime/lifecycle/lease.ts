/**
 * What a call gets when it is let in: the deployment that serves it, found once, on which its
 * inference runs. Only when that deployment starts closing first (a reload swapping in its
 * successor, an unload) does the lease look the function up again, by the name and version the
 * call asked for, at most twice.
 */
import type { InferRequest, InferResponse, PromptRequest, TokenEvent } from "../core/mod.ts";
import { RuntimeError } from "../core/mod.ts";
import { DeploymentClosedError } from "./deployment.ts";
import type { Deployment } from "./deployment.ts";

/** Finds the deployment serving `name` (and `version`) now, loading it on demand. */
export type Acquire = (name: string, version: string | undefined, options: { signal?: AbortSignal }) => Promise<Deployment>;

/** Where a request's inference is cancelled. */
export interface LeaseRunOptions {
  signal?: AbortSignal;
}

/** What a rollout adds to a lease that it routed. */
export interface LeaseRollout {
  /** Whether the rollout's canary share chose the version (a sequence's requests then follow their id). */
  routed: boolean;
  /** The stable version, where the request went to the canary. */
  fallback?: string;
  shadow?: (request: InferRequest, response: InferResponse) => void;
}

/** Attempts on a closing deployment's successor before the call fails. */
const RETRIES = 2;

export class Lease {
  readonly deployment: Deployment;
  readonly #acquire: Acquire;
  readonly #name: string;
  readonly #version: string | undefined;
  /** Whether a rollout chose the version: a sequence's requests must then follow its id. */
  readonly routed: boolean;
  /** The stable version, where a rollout sent this request to its canary: `infer` retries a server-side failure there once. */
  readonly #fallback?: string;
  /** Where a rollout has a shadow: told of each answer `infer` gives (it may copy the request there). */
  readonly #shadow?: (request: InferRequest, response: InferResponse) => void;

  constructor(deployment: Deployment, acquire: Acquire, name: string, version: string | undefined, rollout: LeaseRollout = { routed: false }) {
    this.deployment = deployment;
    this.routed = rollout.routed;
    this.#fallback = rollout.fallback;
    this.#shadow = rollout.shadow;
    this.#acquire = acquire;
    this.#name = name;
    this.#version = version;
  }

  /**
   * Runs the request on the leased deployment, or on its successor if it closed first. A canary's
   * server-side failure (counted against it) is answered by the stable version instead: a client
   * never sees a canary fail what the stable version answers.
   */
  async infer(request: InferRequest, options: LeaseRunOptions = {}): Promise<InferResponse> {
    let deployment = this.deployment;
    let fallback = this.#fallback;
    for (let attempt = 0; ; attempt++) {
      try {
        const response = await deployment.infer(request, options);
        this.#shadow?.(request, response);
        return response;
      } catch (error) {
        if (fallback !== undefined && serverFault(error) && !options.signal?.aborted) {
          deployment = await this.#acquire(this.#name, fallback, options);
          fallback = undefined;
          continue;
        }
        if (!(error instanceof DeploymentClosedError) || attempt >= RETRIES) throw error;
      }
      deployment = await this.#acquire(this.#name, this.#version, options);
    }
  }

  /** Runs the request and yields its responses; on the successor if the deployment closed before the first. */
  stream(request: InferRequest, options: LeaseRunOptions = {}): AsyncGenerator<InferResponse, void, undefined> {
    return this.#retried((deployment) => deployment.stream(request, options), options);
  }

  /** A generator's token events for the prompt; on the successor if the deployment closed before the first. */
  generate(request: PromptRequest, options: LeaseRunOptions = {}): AsyncGenerator<TokenEvent, void, undefined> {
    return this.#retried((deployment) => deployment.generate(request, options), options);
  }

  async *#retried<T>(open: (deployment: Deployment) => AsyncIterable<T>, options: LeaseRunOptions): AsyncGenerator<T, void, undefined> {
    let deployment = this.deployment;
    for (let attempt = 0; ; attempt++) {
      let yielded = false;
      try {
        for await (const item of open(deployment)) {
          yielded = true;
          yield item;
        }
        return;
      } catch (error) {
        if (yielded || !(error instanceof DeploymentClosedError) || attempt >= RETRIES) throw error;
      }
      deployment = await this.#acquire(this.#name, this.#version, options);
    }
  }
}

/** A failure of the server's own (the model or handler threw), not a refusal, a timeout or the client's mistake. */
function serverFault(error: unknown): boolean {
  return !(error instanceof RuntimeError) || error.code === "INTERNAL";
}
