import type { MiddlewareHandler } from "hono";
import { createAuthorizer } from "../call/mod.ts";
import type { AccessOptions } from "../call/mod.ts";
import { apiGroup } from "./routes.ts";

/** The access policy (call/access-policy.ts) as Hono middleware: each request's group from its path. Preflights (OPTIONS) pass: browsers never attach credentials to them. */
export function accessControl(options: AccessOptions): MiddlewareHandler {
  const authorize = createAuthorizer(options, apiGroup);
  return async (c, next) => {
    if (c.req.method !== "OPTIONS") await authorize(c.req.method, c.req.path, (name) => c.req.header(name));
    await next();
  };
}
