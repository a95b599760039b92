import { describe, expect, it } from "vitest";
import { ClientConnections } from "../../../runtime/http/client-connections.ts";

/** `requests` requests settled and answered one after another on open connections. */
function reuse(clients: ClientConnections, requests: number) {
  for (let i = 0; i < requests; i++) {
    clients.settled();
    clients.answered();
  }
}

describe("ClientConnections", () => {
  it("`mayArrive()` is true while no connection was ever reported (Bun, Deno, app.fetch)", () => {
    const clients = new ClientConnections();
    clients.settled();
    expect(clients.mayArrive()).toBe(true);
  });

  it("`mayArrive()` is false once every open connection carries a settled request, true again when one is answered", () => {
    const clients = new ClientConnections();
    clients.opened();
    clients.opened();
    reuse(clients, 8);
    clients.settled();
    expect(clients.mayArrive()).toBe(true); // the second connection may still send
    clients.settled();
    expect(clients.mayArrive()).toBe(false);
    clients.answered();
    expect(clients.mayArrive()).toBe(true);
  });

  it("`mayArrive()` stays true while clients open connections rather than reuse them (no keep-alive)", () => {
    const clients = new ClientConnections();
    for (let i = 0; i < 100; i++) {
      clients.opened();
      clients.settled();
      expect(clients.mayArrive()).toBe(true);
      clients.answered();
      clients.closed();
    }
  });

  it("`mayArrive()` trusts the count once twice as many requests as open connections (at least 8) settled since one opened", () => {
    const clients = new ClientConnections();
    for (let i = 0; i < 6; i++) clients.opened();
    reuse(clients, 5);
    for (let i = 0; i < 6; i++) clients.settled();
    expect(clients.mayArrive()).toBe(true); // all six carry a request, but only 11 of the 12 settled since the last opened
    clients.answered();
    clients.settled();
    expect(clients.mayArrive()).toBe(false);
    clients.opened(); // a client opens a connection: clients may be opening more
    expect(clients.mayArrive()).toBe(true);
  });
});
