import { Pool } from "undici";
import type { Send } from "./load-generator.ts";
import { errorText } from "./model-metadata.ts";
import type { EncodedRequest } from "./request-body.ts";

/** A `send()` over a keep-alive connection pool, and the way to close the pool. */
export interface HttpSender {
  send: Send;
  close(): Promise<void>;
}

/**
 * Posts the pre-encoded `request` to `<baseUrl><options.path>` through an undici `Pool` of at most
 * `connections` keep-alive connections (one request in flight on each). Each answer is read to the
 * end so its connection can carry the next request; anything but 200 is a failure.
 */
export function createHttpSender(baseUrl: string, request: EncodedRequest, options: { path: string; connections: number }): HttpSender {
  const url = new URL(baseUrl);
  const pool = new Pool(url.origin, { connections: options.connections, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const fullPath = `${url.pathname.replace(/\/+$/, "")}${options.path}`;
  const { headers, body } = request;
  return {
    send: async () => {
      const response = await pool.request({ method: "POST", path: fullPath, headers, body });
      if (response.statusCode === 200) {
        await response.body.arrayBuffer();
        return undefined;
      }
      return `HTTP ${response.statusCode}: ${errorText(await response.body.text())}`;
    },
    close: () => pool.close(),
  };
}
