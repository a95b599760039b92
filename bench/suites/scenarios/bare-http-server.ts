/**
 * The floor under any Node inference server on this machine: bare `node:http` that reads the
 * request body to the end and answers 200 with a fixed 256-byte body. No framework, no decoding,
 * no model. bench/suites/scenarios.ts drives it with the same requests as the real servers.
 *
 *   node --import tsx bench/suites/scenarios/bare-http-server.ts [--port 0]
 */
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { port: { type: "string", default: "0" } } });
const answer = Buffer.alloc(256, 0x20);

const server = createServer((request, response) => {
  request.on("data", () => {});
  request.on("end", () => {
    response.writeHead(200, { "content-type": "application/octet-stream", "content-length": answer.length });
    response.end(answer);
  });
});
server.listen(Number(values.port), "127.0.0.1", () => {
  const address = server.address();
  console.log(`bare http server at http://127.0.0.1:${typeof address === "object" && address ? address.port : values.port}`);
});
