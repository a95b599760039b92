import { describe, expect, it } from "vitest";
import { ClientConnections } from "../../../runtime/call/client-connections.ts";
import type { ClientConnection } from "../../../runtime/call/client-connections.ts";
import { FakeClock } from "../../support/fake-clock.ts";

/** `requests` requests on `connection`, each settled and answered before the next. */
function reuse(clients: ClientConnections, connection: ClientConnection, requests: number) {
  for (let i = 0; i < requests; i++) {
    clients.settled(connection);
    clients.answered(connection);
  }
}

/** Two keep-alive clients, 8 rounds: both answered 1 ms after they send, each back `turnaroundMs` after its answer. */
function closedLoop(clock: FakeClock, clients: ClientConnections, turnaroundMs: number): [ClientConnection, ClientConnection] {
  const [a, b] = [clients.opened(), clients.opened()];
  for (let i = 0; i < 8; i++) {
    for (const c of [a, b]) clients.settled(c);
    clock.advance(1);
    for (const c of [a, b]) clients.answered(c);
    clock.advance(turnaroundMs);
  }
  return [a, b];
}

describe("ClientConnections", () => {
  it("`mayArrive()` is true while no connection was ever reported (Bun, Deno, app.fetch)", () => {
    expect(new ClientConnections().mayArrive()).toBe(true);
  });

  it("`mayArrive()` is false once every inference connection carries a settled request, true again when one is answered", () => {
    const clients = new ClientConnections();
    const [a, b] = [clients.opened(), clients.opened()];
    reuse(clients, a, 4);
    reuse(clients, b, 4);
    clients.settled(a);
    expect(clients.mayArrive()).toBe(true); // b may still send
    clients.settled(b);
    expect(clients.mayArrive()).toBe(false);
    clients.answered(b);
    expect(clients.mayArrive()).toBe(true);
  });

  it("`mayArrive()` does not wait on connections that never carried inference (probes, scrapers); a closed one no longer counts", () => {
    const clients = new ClientConnections();
    const a = clients.opened();
    clients.opened(); // a readiness probe's keep-alive connection
    reuse(clients, a, 8);
    clients.settled(a);
    expect(clients.mayArrive()).toBe(false);
    clients.answered(a);
    const b = clients.opened();
    reuse(clients, b, 1);
    reuse(clients, a, 8);
    clients.settled(a);
    expect(clients.mayArrive()).toBe(true); // b carried inference and may send again
    clients.closed(b);
    expect(clients.mayArrive()).toBe(false);
  });

  it("`mayArrive()` stops counting a connection that closed while its request runs, and its late answer changes nothing", () => {
    const clients = new ClientConnections();
    const [a, b] = [clients.opened(), clients.opened()];
    reuse(clients, a, 4);
    reuse(clients, b, 4);
    clients.settled(a);
    clients.closed(a); // its client went away; the request still runs
    expect(clients.mayArrive()).toBe(true); // b may still send
    clients.settled(b);
    expect(clients.mayArrive()).toBe(false);
    clients.answered(a);
    expect(clients.mayArrive()).toBe(false);
    clients.answered(b);
    expect(clients.mayArrive()).toBe(true);
  });

  it("`mayArrive()` stays true while clients open connections rather than reuse them (no keep-alive)", () => {
    const clients = new ClientConnections();
    for (let i = 0; i < 100; i++) {
      const c = clients.opened();
      clients.settled(c);
      expect(clients.mayArrive()).toBe(true);
      clients.answered(c);
      clients.closed(c);
    }
  });

  it("`mayArrive()` trusts the count once twice as many requests as inference connections (at least 8) settled since one opened", () => {
    const clients = new ClientConnections();
    const open = Array.from({ length: 6 }, () => clients.opened());
    for (const c of open.slice(0, 5)) reuse(clients, c, 1);
    for (const c of open) clients.settled(c);
    expect(clients.mayArrive()).toBe(true); // all six carry a request, but only 11 of the 12 settled since the last opened
    clients.answered(open[5]!);
    clients.settled(open[5]!);
    expect(clients.mayArrive()).toBe(false);
    clients.opened(); // a client opens a connection: more may come
    expect(clients.mayArrive()).toBe(true);
  });

  it("`expectedAt()` is undefined until the count is trusted and a turnaround was seen (Bun, Deno, new clients)", () => {
    const clock = new FakeClock();
    expect(new ClientConnections({ clock }).expectedAt()).toBeUndefined();
    const clients = new ClientConnections({ clock });
    const a = clients.opened();
    clients.settled(a); // a first request: no answer before it, no turnaround
    expect(clients.expectedAt()).toBeUndefined();
  });

  it("`expectedAt()` expects each connection back one smoothed turnaround after its answer, the earliest first; Infinity once all are in", () => {
    const clock = new FakeClock();
    const clients = new ClientConnections({ clock });
    const [a, b] = closedLoop(clock, clients, 0.5);
    clients.settled(a);
    clients.settled(b);
    clock.advance(1);
    clients.answered(a);
    clock.advance(0.2);
    clients.answered(b);
    expect(clients.expectedAt()).toBeCloseTo(clock.now() - 0.2 + 0.5, 6); // a's answer + 0.5
    clock.advance(0.3);
    clients.settled(a);
    expect(clients.expectedAt()).toBeCloseTo(clock.now() - 0.3 + 0.5, 6); // now b's
    clients.settled(b);
    expect(clients.expectedAt()).toBe(Infinity);
  });

  it("`expectedAt()` stops expecting a connection silent for four turnarounds, and counts it again once it sends", () => {
    const clock = new FakeClock();
    const clients = new ClientConnections({ clock });
    const [a, b] = closedLoop(clock, clients, 0.5);
    clients.settled(a);
    expect(clients.expectedAt()).toBeCloseTo(clock.now()); // b, due now
    clock.advance(2.1); // b paused: more than 4 × 0.5 ms since its answer
    expect(clients.expectedAt()).toBe(Infinity);
    clients.settled(b); // back after a pause: no turnaround sample from it
    clients.answered(b);
    expect(clients.expectedAt()).toBeCloseTo(clock.now() + 0.5, 6);
  });
});
