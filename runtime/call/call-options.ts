import type { DirectBody, HeaderLookup } from "./direct-body.ts";

// Classes, not object literals with `get signal()`: V8 (Node 20) allocates a literal that has an
// accessor in the old generation, so everything its getter reached — the body, the request, the
// connection's objects — survived every young-generation collection and waited for a full one.
// Under load that was every request (`bash bench/studies/gc-window.sh <checkout> mlp 1 json` on the
// code before: ~2 KB a request promoted, 3.3 ms scavenges; after: 16 B, 1.1 ms;
// test/unit/tensor/young-garbage.test.ts shows the mechanism). A getter on a class's
// prototype is shared, and the signal is still read only where a request waits: an adapter may
// build it on first read (Node's costs an AbortController and a listener).

/** Whatever carries a call's client signal: its body (HTTP), or the call itself (gRPC). */
export type SignalSource = Pick<DirectBody, "signal">;

/** The request's client signal, read from its body when first asked for. */
class BodySignal {
  readonly #body: SignalSource;

  constructor(body: SignalSource) {
    this.#body = body;
  }

  get signal(): AbortSignal {
    return this.#body.signal;
  }
}

/** What a call's lookup of its deployment carries: admission by `rate_limit`, on the request's headers. */
export class Admission extends BodySignal {
  readonly admission: HeaderLookup;

  constructor(header: HeaderLookup, body: SignalSource) {
    super(body);
    this.admission = header;
  }
}

/** What a call hands its lease with its request. */
export class CallOptions extends BodySignal {}
