import type { HeaderLookup, Reply } from "../call/mod.ts";

/** What a browser on an allowed origin may send: the binary extension's header included. */
const ALLOW_HEADERS = "Authorization,Content-Type,Content-Encoding,Inference-Header-Content-Length";
/** What its script may read of an answer. */
const EXPOSE_HEADERS = "Inference-Header-Content-Length,Retry-After,WWW-Authenticate";
const ALLOW_METHODS = "GET,POST,OPTIONS";
const MAX_AGE_S = "600";

/**
 * `--cors-origin`'s headers (the Fetch standard's CORS protocol): a request from an allowed origin
 * is told so, its refusals included (a page reads a 401 as such, not as a network error); a
 * preflight (OPTIONS) is answered 204 before access control, since a browser sends no key with it.
 * Another origin gets no `Access-Control-Allow-Origin`, so its browser shows the page nothing.
 */
export class CorsPolicy {
  readonly #any: boolean;
  readonly #origins: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.#any = origins.includes("*");
    this.#origins = new Set(origins);
  }

  /** The preflight's answer. */
  preflight(header: HeaderLookup): Reply {
    return { status: 204, headers: { ...this.#headers(header), "access-control-max-age": MAX_AGE_S, "access-control-allow-methods": ALLOW_METHODS, "access-control-allow-headers": ALLOW_HEADERS }, body: "" };
  }

  /** `reply` with the headers its request's origin earns. */
  answer(reply: Reply, header: HeaderLookup): Reply {
    const headers = { ...reply.headers, ...this.#headers(header) };
    if (reply.headers.vary !== undefined && headers.vary !== reply.headers.vary) headers.vary = `${reply.headers.vary}, ${headers.vary}`;
    return { ...reply, headers };
  }

  #headers(header: HeaderLookup): Record<string, string> {
    const origin = header("origin");
    const allowed = this.#any ? "*" : origin !== undefined && this.#origins.has(origin) ? origin : undefined;
    return {
      ...(allowed !== undefined && { "access-control-allow-origin": allowed }),
      "access-control-expose-headers": EXPOSE_HEADERS,
      // A cache must not hand one origin's answer to another.
      ...(!this.#any && { vary: "Origin" }),
    };
  }
}
