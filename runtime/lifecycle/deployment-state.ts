/** Where one function version stands. Transitions belong to its ManagedVersion (managed-version.ts), and only to it. */
export type DeploymentState =
  | "UNAVAILABLE" // registered (or unloaded) but not in memory; requests are refused
  | "LOADING" // sessions are being created; requests wait or are refused
  | "READY" // instances exist and accept requests
  | "PARKED" // sessions released, model bytes kept in host memory; the next request restores it
  | "UNLOADING" // draining in-flight requests before release
  | "FAILED"; // the last load failed; `reason` says why
