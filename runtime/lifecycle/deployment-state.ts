/**
 * Where one function version stands, and what it does next when something happens to it: decided
 * here from what it is now (a view in, a transition out, nothing acted on), applied by its
 * ManagedVersion (managed-version.ts), and only by it.
 */
export type DeploymentState =
  | "UNAVAILABLE" // registered (or unloaded) but not in memory; requests are refused
  | "LOADING" // sessions are being created; requests wait or are refused
  | "READY" // instances exist and accept requests
  | "PARKED" // sessions released, model bytes kept in host memory; the next request restores it
  | "UNLOADING" // draining in-flight requests before release
  | "FAILED"; // the last load failed; `reason` says why

/** Why a version parks (the lifecycle metric's label): its idle timeout, room for another's load, the repository API. */
export type ParkReason = "idle" | "budget" | "api";

/** What a version is now, as its transitions are decided. */
export interface VersionView {
  state: DeploymentState;
  /** A deployment is in memory. */
  loaded: boolean;
  /** The function's `scale.park`: keep the model bytes when idle (`host`) or unload (`none`). */
  park: "host" | "none";
  /** Requests in flight, and sequences whose state the deployment holds. */
  inflight: number;
  liveSequences: number;
  /** How long the deployment has been idle (no request in flight), and the function's idle timeout (0: never). */
  idleMs: number;
  idleTimeoutMs: number;
}

/** What happens to a version: a request wants it, its idle timer fired, or something asks it to park. */
export type VersionEvent = { on: "request" } | { on: "idle-timer" } | { on: "park"; why: ParkReason };

/** What the version does about it. */
export type Transition =
  | { do: "serve" }
  | { do: "load"; from: "file" | "parked" }
  | { do: "park"; why: ParkReason }
  | { do: "unload"; why: ParkReason }
  | { do: "wait"; ms: number }
  | { do: "nothing" };

/** The transition `event` calls for in a version that is `view`. */
export function planTransition(view: VersionView, event: VersionEvent): Transition {
  const ready = view.state === "READY" && view.loaded;
  switch (event.on) {
    case "request":
      // One load at a time (the version shares it); a parked version wakes from the bytes it kept.
      return ready ? { do: "serve" } : { do: "load", from: view.state === "PARKED" ? "parked" : "file" };
    case "park":
      if (view.park === "none") return { do: "unload", why: event.why };
      return ready ? { do: "park", why: event.why } : { do: "nothing" };
    case "idle-timer": {
      if (!ready || view.idleTimeoutMs <= 0) return { do: "nothing" };
      // Busy: the idle time starts when the last request ends; looked at again a timeout later.
      if (view.inflight > 0) return { do: "wait", ms: view.idleTimeoutMs };
      const left = view.idleTimeoutMs - view.idleMs;
      if (left > 0) return { do: "wait", ms: left };
      // Live sequences keep their state in the deployment: parking would end them.
      if (view.liveSequences > 0) return { do: "wait", ms: view.idleTimeoutMs };
      return view.park === "host" ? { do: "park", why: "idle" } : { do: "unload", why: "idle" };
    }
  }
}
