// The tests' own fetch calls (the global dispatcher) keep an idle connection for 100 ms, not undici's
// 4 s. A server the tests stop with SIGTERM closes no idle keep-alive socket (a client may be sending
// on it: adapters/node/http-server.ts), so it waited for its keep-alive timeout on the connection a
// test's last fetch left open — ~3 s per server stopped under Deno (handler.test.ts: 70 s, 9 s now).
// Clients a test builds itself (undici Pools, node:net sockets) keep their own settings.
import { Agent, setGlobalDispatcher } from "undici";

setGlobalDispatcher(new Agent({ keepAliveTimeout: 100, keepAliveMaxTimeout: 100 }));
