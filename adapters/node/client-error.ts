import type { Server } from "node:http";
import type { Duplex } from "node:stream";

/**
 * Answers requests Node's HTTP parser refuses before the app sees them (a head over
 * --max-http-header-size, broken framing) with a JSON `{"error"}` body like every other refusal,
 * instead of Node's bare status line. The socket is closed after it: its framing is unknown.
 */
export function answerClientErrors(server: Server): void {
  server.on("clientError", (error: Error & { code?: string }, socket: Duplex) => {
    // A reset socket, or one whose response already started: nothing can be written cleanly
    // (Node's own handler makes the same check).
    const current = (socket as { _httpMessage?: { _headerSent?: boolean } })._httpMessage;
    if (error.code === "ECONNRESET" || !socket.writable || current?._headerSent) return void socket.destroy();
    const [status, reason] =
      error.code === "HPE_HEADER_OVERFLOW"
        ? [431, "Request Header Fields Too Large"]
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? [408, "Request Timeout"]
          : [400, "Bad Request"];
    const body = JSON.stringify({ error: `${reason}: the HTTP request could not be parsed (${error.code ?? "malformed request"})` });
    socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
}
