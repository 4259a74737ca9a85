import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { WebSocketConstructor } from "../../src/client.js";
import { ProtocolError } from "../../src/protocol.js";
import { RealmClosedError } from "../../src/realm/close-codes.js";
import {
  type ConnectRealmOptions,
  connectRealm,
  type RealmAttach,
  type RealmCommit,
  type RealmConnection,
  type RealmRejection,
  type RealmUnknownWrite,
  realmUrl,
} from "../../src/realm/connect.js";
import { encodePatch, KeyTable } from "../../src/realm/codec.js";
import type { JsonObject, Op } from "../../src/realm/patch.js";
import { type FakeConn, FakeRealmServer, waitFor } from "../helpers/fake-realm-server.js";
import { fakeWebSocket } from "../helpers/fake-websocket.js";
import {
  DEFAULT_REALM_LIMITS,
  decodeRealmClientMessage,
  encodeRealmServerMessage,
  REALM_HELLO_COMMITS,
  RealmMessageType,
} from "../../src/realm/protocol.js";

const ID = "match/m-1";
let server: FakeRealmServer;
const opened: RealmConnection[] = [];

beforeEach(async () => {
  server = await FakeRealmServer.start();
  server.tickets.set("T-ann", "ann");
  server.tickets.set("T-bob", "bob");
  const r = server.realm(ID);
  r.doc = { players: {}, log: [] };
  r.version = 5;
});
afterEach(async () => {
  for (const c of opened.splice(0)) c.close();
  await server.stop();
});

function connect(ticket: ConnectRealmOptions["ticket"] = "T-ann", options: Partial<ConnectRealmOptions> = {}): RealmConnection {
  const c = connectRealm(server.url, "match", "m-1", {
    ticket,
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    reconnect: { initialDelayMs: 10, maxDelayMs: 40, jitter: 0 },
    pingIntervalMs: 0,
    ...options,
  });
  opened.push(c);
  return c;
}

/** Records a connection's events. */
function record(c: RealmConnection) {
  const log = {
    commits: [] as RealmCommit[],
    rejects: [] as RealmRejection[],
    unknown: [] as RealmUnknownWrite[],
    opens: [] as RealmAttach[],
    errors: [] as Error[],
    closes: [] as { code: number; reconnecting: boolean }[],
    changes: 0,
  };
  c.on("commit", (x) => log.commits.push(x));
  c.on("reject", (x) => log.rejects.push(x));
  c.on("unknown", (x) => log.unknown.push(x));
  c.on("open", (x) => log.opens.push(x));
  c.on("error", (x) => log.errors.push(x));
  c.on("close", (x) => log.closes.push(x));
  c.on("change", () => log.changes++);
  return log;
}

const connsOf = (avatar: string): FakeConn[] => server.conns.filter((c) => c.avatar === avatar);
const lastConn = (avatar: string): FakeConn => connsOf(avatar).at(-1)!;
const writesOf = (c: FakeConn) => c.received.filter((r) => r.msg.type === RealmMessageType.Write);
const serverDoc = () => server.realm(ID).doc;

describe("connecting", () => {
  it("opens /realm/<kind>/<key> with the subprotocol, says it holds nothing and takes the HYDRATE", async () => {
    server.limits = { ...server.limits, writeRatePerSecond: 20 };
    const ann = connect();
    expect(ann.state).toBe("connecting");
    expect(ann.url).toBe(`${server.url.replace("http", "ws")}/realm/match/m-1`);
    const attach = await ann.ready;
    const conn = lastConn("ann");
    expect(conn.path).toBe("/realm/match/m-1");
    expect(conn.protocol).toBe("tessera.realm.v1");
    expect(server.sent(conn, RealmMessageType.Hello)).toEqual([{ type: 1, protocol: 1, ticket: "T-ann", epoch: 0, version: 0, flags: REALM_HELLO_COMMITS }]);
    expect(attach).toMatchObject({ mode: "hydrate", epoch: 7, version: 5, avatar: "ann" });
    expect(ann.state).toBe("open");
    expect(ann.document).toEqual({ players: {}, log: [] });
    expect(ann.version).toBe(5);
    expect(ann.epoch).toBe(7);
    expect(ann.avatar).toBe("ann");
    expect(ann.limits.writeRatePerSecond).toBe(20);
  });

  it("validates the kind, the key and the URL", () => {
    expect(realmUrl("https://h.example/base/", "match", "a.b:c-d_1")).toBe("wss://h.example/base/realm/match/a.b:c-d_1");
    expect(() => realmUrl("http://h", "Match", "k")).toThrow(/realm kind/);
    expect(() => realmUrl("http://h", "match", "a/b")).toThrow(/realm key/);
    expect(() => realmUrl("http://h", "match", "k".repeat(129))).toThrow(/realm key/);
    expect(() => realmUrl("ftp://h", "match", "k")).toThrow(/http\(s\)/);
  });

  it("answers the server's PING with a PONG", async () => {
    const ann = connect();
    await ann.ready;
    server.send(lastConn("ann"), { type: RealmMessageType.Ping, nonce: 42 });
    await waitFor(() => server.sent(lastConn("ann"), RealmMessageType.Pong).length > 0);
    expect(server.sent(lastConn("ann"), RealmMessageType.Pong)).toEqual([{ type: 4, nonce: 42 }]);
  });

  it("pings the server when asked to", async () => {
    const ann = connect("T-ann", { pingIntervalMs: 20 });
    await ann.ready;
    await waitFor(() => server.sent(lastConn("ann"), RealmMessageType.Ping).length >= 2);
  });
});

describe("writes", () => {
  it("apply at once, are confirmed by ACK, and reach the other clients as COMMITs", async () => {
    const ann = connect();
    const bob = connect("T-bob");
    await Promise.all([ann.ready, bob.ready]);
    const annLog = record(ann);
    const bobLog = record(bob);
    const w = ann.set(["players", "ann"], { x: 1 });
    expect(ann.document).toEqual({ players: { ann: { x: 1 } }, log: [] });
    expect(ann.confirmed).toEqual({ players: {}, log: [] });
    expect(ann.pendingWrites).toBe(1);
    expect(await w.done).toEqual({ status: "committed", version: 6 });
    expect(ann.confirmed).toEqual({ players: { ann: { x: 1 } }, log: [] });
    expect(ann.version).toBe(6);
    expect(ann.pendingWrites).toBe(0);
    expect(annLog.commits).toEqual([
      { version: 6, ops: [{ op: "set", path: ["players", "ann"], value: { x: 1 } }], own: true, writeId: w.id, seq: 1, sliced: false },
    ]);
    await waitFor(() => bob.version === 6);
    expect(bob.document).toEqual({ players: { ann: { x: 1 } }, log: [] });
    expect(bobLog.commits[0]).toMatchObject({ version: 6, own: false, sliced: false });
    expect(bobLog.changes).toBe(1);
    expect(serverDoc()).toEqual({ players: { ann: { x: 1 } }, log: [] });
  });

  it("take draft helpers and op lists, and refuse malformed ops", async () => {
    const ann = connect();
    await ann.ready;
    const w = ann.write((d) => d.set(["players", "ann"], 1).append(["log"], "joined").delete(["players", "ann"]));
    expect((await w.done).status).toBe("committed");
    expect(serverDoc()).toEqual({ players: {}, log: ["joined"] });
    await ann.append(["log"], "again").done;
    await ann.delete(["log", 0]).done;
    expect(serverDoc()).toEqual({ players: {}, log: ["again"] });
    expect(() => ann.write([{ op: "set", path: ["x"] } as unknown as Op])).toThrow(/field "value": required/);
    expect(await ann.write([]).done).toEqual({ status: "committed", version: ann.version });
  });

  it("refuses at once, locally, a write that does not apply to the document", async () => {
    const ann = connect();
    await ann.ready;
    const log = record(ann);
    const w = ann.delete(["nope"]);
    expect(await w.done).toMatchObject({ status: "rejected", code: "invalid_patch", local: true });
    expect(log.rejects).toHaveLength(1);
    expect(log.rejects[0]!.message).toMatch(/the root has no key "nope"/);
    expect(writesOf(lastConn("ann"))).toHaveLength(0);
  });

  it("queue before the first attach and apply on top of the hydrated document", async () => {
    const ann = connect();
    const w = ann.set(["players", "ann"], { ready: false });
    expect(ann.document).toEqual({});
    expect((await w.done).status).toBe("committed");
    expect(ann.document).toEqual({ players: { ann: { ready: false } }, log: [] });
  });

  it("roll back on REJECT", async () => {
    server.onWrite = () => ({ reject: "permission_denied", message: "players/bob is owned by avatar bob" });
    const ann = connect();
    await ann.ready;
    const log = record(ann);
    const w = ann.set(["players", "bob"], 1);
    expect(ann.document.players).toEqual({ bob: 1 });
    expect(await w.done).toEqual({ status: "rejected", code: "permission_denied", message: "players/bob is owned by avatar bob", local: false });
    expect(ann.document).toEqual({ players: {}, log: [] });
    expect(log.rejects).toEqual([
      { writeId: w.id, seq: 1, code: "permission_denied", message: "players/bob is owned by avatar bob", ops: [{ op: "set", path: ["players", "bob"], value: 1 }], local: false },
    ]);
  });

  it("are replaced by a COMMIT with their seq when the server sliced them", async () => {
    server.onWrite = (_c, _seq, ops) => ({ commitAs: [{ op: "set", path: ["players", "ann"], value: { shown: 1 } }], ops });
    const ann = connect();
    await ann.ready;
    const log = record(ann);
    const w = ann.set(["players", "ann"], { shown: 1, hidden: 2 });
    expect(await w.done).toEqual({ status: "committed", version: 6 });
    expect(ann.document).toEqual({ players: { ann: { shown: 1 } }, log: [] });
    expect(log.commits).toEqual([
      { version: 6, ops: [{ op: "set", path: ["players", "ann"], value: { shown: 1 } }], own: true, writeId: w.id, seq: 1, sliced: true },
    ]);
  });

  it("that a newer commit makes inapplicable are dropped and reported once", async () => {
    server.realm(ID).doc = { players: { ann: { hp: 3 } }, log: [] };
    server.onWrite = () => ({ hold: true });
    const ann = connect();
    await ann.ready;
    const log = record(ann);
    const w = ann.set(["players", "ann", "hp"], 2);
    await waitFor(() => server.held.length === 1);
    server.commit(ID, [{ op: "delete", path: ["players", "ann"] }], lastConn("ann"));
    server.send(lastConn("ann"), { type: RealmMessageType.Commit, version: 6, patch: encodePatch([{ op: "delete", path: ["players", "ann"] }], lastConn("ann").outKeys) });
    await waitFor(() => log.rejects.length === 1);
    expect(log.rejects[0]).toMatchObject({ writeId: w.id, seq: 1, code: "invalid_patch", local: true });
    expect(ann.document).toEqual({ players: {}, log: [] });
    server.onWrite = undefined;
    server.release(server.held[0]!); // the server refuses it: invalid_patch
    expect(await w.done).toMatchObject({ status: "rejected", local: true });
    await waitFor(() => ann.pendingWrites === 0);
    expect(log.rejects).toHaveLength(1);
    expect(log.errors).toEqual([]);
  });
});

describe("reconnecting", () => {
  it("says the epoch and version it holds and takes a RESUME with the missed commits", async () => {
    const ann = connect();
    await ann.ready;
    const log = record(ann);
    lastConn("ann").ws.terminate();
    await waitFor(() => log.closes.length === 1);
    server.commit(ID, [{ op: "set", path: ["players", "bob"], value: 1 }]);
    server.commit(ID, [{ op: "append", path: ["log"], value: "bob joined" }]);
    await waitFor(() => log.opens.length === 1);
    expect(log.closes[0]).toMatchObject({ code: 1006, reconnecting: true });
    expect(server.sent(lastConn("ann"), RealmMessageType.Hello)[0]).toMatchObject({ epoch: 7, version: 5 });
    expect(log.opens[0]).toMatchObject({ mode: "resume", epoch: 7, version: 5, head: 7 });
    await waitFor(() => ann.version === 7);
    expect(ann.document).toEqual(serverDoc());
    expect(ann.state).toBe("open");
  });

  it("hydrates again when the epoch changed; unanswered writes become unknown, unsent ones go after the reconnect", async () => {
    server.onWrite = () => ({ hold: true });
    const ann = connect("T-ann", { reconnect: { initialDelayMs: 60, jitter: 0 } });
    await ann.ready;
    const log = record(ann);
    const lost = ann.set(["players", "ann"], "lost?");
    await waitFor(() => server.held.length === 1);
    let queued: ReturnType<RealmConnection["set"]> | undefined;
    ann.on("close", () => {
      queued = ann.append(["log"], "written while away");
    });
    const r = server.realm(ID);
    r.epoch = 8;
    r.version = 1;
    r.doc = { players: {}, log: ["fresh"] };
    r.log = [];
    server.onWrite = undefined;
    lastConn("ann").ws.close(1001, "going away");
    expect(await lost.done).toEqual({ status: "unknown" });
    expect(log.unknown).toEqual([{ writeId: lost.id, seq: 1, ops: [{ op: "set", path: ["players", "ann"], value: "lost?" }] }]);
    expect(ann.document).toEqual({ players: {}, log: ["written while away"] });
    expect(await queued!.done).toEqual({ status: "committed", version: 2 });
    expect(server.sent(lastConn("ann"), RealmMessageType.Hello)[0]).toMatchObject({ epoch: 7, version: 5 });
    expect(log.opens[0]).toMatchObject({ mode: "hydrate", epoch: 8, version: 1 });
    expect(ann.document).toEqual({ players: {}, log: ["fresh", "written while away"] });
    expect(serverDoc()).toEqual(ann.document);
  });

  it("re-asserts with assertOnAttach after every attach", async () => {
    const ann = connect();
    const calls: string[] = [];
    ann.assertOnAttach((doc: JsonObject, attach) => {
      calls.push(attach.mode);
      return [{ op: "set", path: ["presence"], value: { ...(doc.presence as JsonObject | undefined), [attach.avatar]: true } }];
    });
    await ann.ready;
    await waitFor(() => (serverDoc().presence as JsonObject | undefined)?.ann === true);
    // An ephemeral realm restarts: new epoch, its presence gone.
    const r = server.realm(ID);
    Object.assign(r, { epoch: 9, version: 1, doc: { players: {} }, log: [] });
    lastConn("ann").ws.close(1001, "restart");
    await waitFor(() => calls.length === 2);
    await waitFor(() => (serverDoc().presence as JsonObject | undefined)?.ann === true);
    expect(calls).toEqual(["hydrate", "hydrate"]);
    expect(ann.document).toEqual({ players: {}, presence: { ann: true } });
  });

  it("after a malformed server message closes with 4000 and hydrates again", async () => {
    const ann = connect();
    await ann.ready;
    const log = record(ann);
    const first = lastConn("ann");
    first.ws.send("a text message");
    await waitFor(() => log.opens.length === 1);
    expect(log.errors[0]).toBeInstanceOf(ProtocolError);
    await waitFor(() => first.ws.readyState === WebSocket.CLOSED);
    expect(server.sent(lastConn("ann"), RealmMessageType.Hello)[0]).toMatchObject({ epoch: 0, version: 0 });
    expect(log.opens[0]!.mode).toBe("hydrate");
  });

  it("when a commit does not apply, reports the document out of step and hydrates again", async () => {
    const ann = connect();
    await ann.ready;
    const log = record(ann);
    const c = lastConn("ann");
    server.send(c, { type: RealmMessageType.Commit, version: 6, patch: encodePatch([{ op: "delete", path: ["nope"] }], c.outKeys) });
    await waitFor(() => log.opens.length === 1);
    expect(log.errors[0]!.message).toMatch(/out of step/);
    expect(server.sent(lastConn("ann"), RealmMessageType.Hello)[0]).toMatchObject({ epoch: 0, version: 0 });
    expect(ann.document).toEqual(serverDoc());
  });

  it("reconnects after 4014 and 1001, and gets a fresh ticket after 4002 from a ticket function", async () => {
    const tickets = ["close:4014", "close:1001", "close:4002", "T-ann"];
    const asked: string[] = [];
    const ann = connect(async (realm) => {
      asked.push(`${realm.kind}/${realm.key}`);
      return tickets.shift()!;
    });
    const log = record(ann);
    await ann.ready;
    expect(asked).toHaveLength(4);
    expect(asked[0]).toBe("match/m-1");
    expect(log.closes.map((c) => c.code)).toEqual([4014, 1001, 4002]);
    expect(log.closes.every((c) => c.reconnecting)).toBe(true);
  });

  it.each([4001, 4003, 4004, 4009, 4010, 4012, 4013])("does not reconnect after %i", async (code) => {
    const ann = connect(`close:${code}`);
    const log = record(ann);
    const err = await ann.ready.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RealmClosedError);
    expect((err as RealmClosedError).code).toBe(code);
    expect(ann.state).toBe("closed");
    expect(ann.error).toBe(err);
    expect(log.closes).toEqual([{ code, reason: "refused by the test", reconnecting: false }]);
    await new Promise((r) => setTimeout(r, 60));
    expect(server.conns).toHaveLength(1);
    expect(() => ann.set(["x"], 1)).toThrow(/closed/);
  });

  it("does not retry 4002 with a fixed ticket", async () => {
    const ann = connect("close:4002");
    const err = await ann.ready.catch((e: unknown) => e);
    expect((err as RealmClosedError).codeName).toBe("ticket_expired");
  });

  it("on close() cancels unsent writes and reports sent ones unknown", async () => {
    server.onWrite = () => ({ hold: true });
    server.limits = { ...server.limits, writeRatePerSecond: 1, writeRateBurst: 2 };
    const ann = connect();
    await ann.ready;
    const log = record(ann);
    const sent = ann.set(["a"], 1);
    const queued = ann.set(["b"], 1); // the bucket (2, less a reserve of 1) holds it back
    await waitFor(() => server.held.length === 1);
    ann.close();
    expect(await sent.done).toEqual({ status: "unknown" });
    expect(await queued.done).toEqual({ status: "cancelled" });
    expect(log.unknown).toHaveLength(1);
    expect(ann.document).toEqual(ann.confirmed);
    expect(ann.state).toBe("closed");
  });
});

describe("the resume option (a document kept across a page reload)", () => {
  /** Connects, writes, and returns what a page would keep: (epoch, version, confirmed). */
  async function keptPoint() {
    const ann = connect();
    await ann.ready;
    await ann.set(["players", "ann"], { x: 1 }).done;
    const kept = { epoch: ann.epoch, version: ann.version, document: ann.confirmed };
    ann.close();
    return kept;
  }

  it("says the kept epoch and version in the first HELLO, starts from the kept document and takes the RESUME", async () => {
    const kept = await keptPoint();
    expect(kept).toEqual({ epoch: 7, version: 6, document: { players: { ann: { x: 1 } }, log: [] } });
    server.commit(ID, [{ op: "append", path: ["log"], value: "while away" }]);
    const again = connect("T-ann", { resume: kept });
    const log = record(again);
    expect(again.document).toEqual(kept.document);
    expect(again.document).not.toBe(kept.document); // copied
    expect([again.epoch, again.version]).toEqual([7, 6]);
    const attach = await again.ready;
    expect(server.sent(lastConn("ann"), RealmMessageType.Hello)).toEqual([{ type: 1, protocol: 1, ticket: "T-ann", epoch: 7, version: 6, flags: REALM_HELLO_COMMITS }]);
    expect(attach).toMatchObject({ mode: "resume", epoch: 7, version: 6, head: 7 });
    await waitFor(() => again.version === 7);
    expect(again.document).toEqual({ players: { ann: { x: 1 } }, log: ["while away"] });
    expect(log.commits.map((c) => [c.version, c.own])).toEqual([[7, false]]);
    expect(log.opens).toHaveLength(1);
  });

  it("is replaced by a HYDRATE when the realm is at another epoch", async () => {
    const kept = await keptPoint();
    Object.assign(server.realm(ID), { epoch: 8, version: 2, doc: { players: {}, log: ["new epoch"] }, log: [] });
    const again = connect("T-ann", { resume: kept });
    const attach = await again.ready;
    expect(server.sent(lastConn("ann"), RealmMessageType.Hello)[0]).toMatchObject({ epoch: 7, version: 6 });
    expect(attach).toMatchObject({ mode: "hydrate", epoch: 8, version: 2 });
    expect(again.document).toEqual({ players: {}, log: ["new epoch"] });
  });

  it("refuses a point that is not {epoch, version, document}", () => {
    const bad = (resume: unknown) => () => connect("T-ann", { resume: resume as ConnectRealmOptions["resume"] });
    expect(bad({ epoch: -1, version: 0, document: {} })).toThrow(/resume.epoch must be an integer/);
    expect(bad({ epoch: 1, version: 1.5, document: {} })).toThrow(/resume.version must be an integer/);
    expect(bad({ epoch: 1, version: 2 ** 53 + 2, document: {} })).toThrow(/resume.version/);
    expect(bad({ epoch: 1, version: 1, document: [] })).toThrow(/resume.document must be a JSON object/);
    expect(bad({ epoch: 1, version: 1, document: { f: () => 1 } })).toThrow(/not a JSON value/);
    expect(bad(null)).toThrow(/options.resume must be/);
  });
});

describe("ingress limits", () => {
  it("splits a write over maxPatchesPerFrame into several WRITEs", async () => {
    server.limits = { ...server.limits, maxPatchesPerFrame: 3 };
    const ann = connect();
    await ann.ready;
    const ops: Op[] = Array.from({ length: 7 }, (_, i) => ({ op: "append", path: ["log"], value: i }));
    const w = ann.write(ops);
    expect(await w.done).toEqual({ status: "committed", version: 8 });
    expect(writesOf(lastConn("ann")).map((r) => r.ops!.length)).toEqual([3, 3, 1]);
    expect(serverDoc().log).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(ann.document).toEqual(serverDoc());
  });

  it("splits a write over maxFrameBytes so that each WRITE fits", async () => {
    server.limits = { ...server.limits, maxFrameBytes: 120 };
    const ann = connect();
    await ann.ready;
    const ops: Op[] = Array.from({ length: 6 }, (_, i) => ({ op: "set", path: ["players", `p${i}`], value: "x".repeat(40) }));
    expect((await ann.write(ops).done).status).toBe("committed");
    const writes = writesOf(lastConn("ann"));
    expect(writes.length).toBeGreaterThan(1);
    for (const r of writes) {
      if (r.msg.type === RealmMessageType.Write) expect(r.msg.patch.length).toBeLessThanOrEqual(120 - 16);
    }
    expect(Object.keys(serverDoc().players as JsonObject)).toHaveLength(6);
  });

  it("refuses locally an op that cannot fit a frame or breaks the key and leaf limits", async () => {
    server.limits = { ...server.limits, maxFrameBytes: 64, maxRecordKeyLength: 7, maxExpandedLeaves: 3 };
    const ann = connect();
    await ann.ready;
    const log = record(ann);
    const big = await ann.set(["players", "p"], "x".repeat(100)).done;
    const longKey = await ann.set(["players", "abcdefgh"], 1).done;
    const leaves = await ann.set(["log"], [1, 2, 3, 4]).done;
    for (const o of [big, longKey, leaves]) expect(o).toMatchObject({ status: "rejected", code: "limits_exceeded", local: true });
    expect(log.rejects.map((r) => r.message.split(":")[1]!.trim())).toEqual(["maxFrameBytes", "maxRecordKeyLength", "maxExpandedLeaves"]);
    expect(writesOf(lastConn("ann"))).toHaveLength(0);
    expect(ann.document).toEqual(serverDoc());
  });

  it("paces writes by writeRatePerSecond and writeRateBurst, so the server never refuses one", async () => {
    server.limits = { ...server.limits, writeRatePerSecond: 20, writeRateBurst: 3 };
    const ann = connect();
    await ann.ready;
    const done = Array.from({ length: 6 }, (_, i) => ann.append(["log"], i).done);
    expect(ann.document.log).toEqual([0, 1, 2, 3, 4, 5]);
    const outcomes = await Promise.all(done);
    expect(outcomes.every((o) => o.status === "committed")).toBe(true);
    expect(server.rateRejects).toBe(0);
    const at = writesOf(lastConn("ann")).map((r) => r.at);
    // 2 at once (the burst of 3 less a reserve of 1), then one per 50 ms.
    expect(at[5]! - at[0]!).toBeGreaterThanOrEqual(4 * 50 - 15);
    expect(serverDoc().log).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("backs off after a REJECT for the rate and sends the write again", async () => {
    let first = true;
    server.onWrite = () => {
      if (!first) return undefined;
      first = false;
      return { reject: "limits_exceeded", message: "limits_exceeded: writeRatePerSecond: more than 100 writes/s (burst 200); retry in 80 ms" };
    };
    const ann = connect();
    await ann.ready;
    const log = record(ann);
    const w = ann.set(["players", "ann"], 1);
    expect(await w.done).toEqual({ status: "committed", version: 6 });
    expect(log.rejects).toEqual([]);
    const writes = writesOf(lastConn("ann"));
    expect(writes).toHaveLength(2);
    expect(writes[1]!.at - writes[0]!.at).toBeGreaterThanOrEqual(75);
    expect(writes[1]!.ops).toEqual(writes[0]!.ops);
    const seqs = writes.map((r) => (r.msg.type === RealmMessageType.Write ? r.msg.seq : -1));
    expect(seqs[1]).toBeGreaterThan(seqs[0]!);
    expect(ann.document).toEqual(serverDoc());
  });
});

describe("server messages that do not fit the HELLO", () => {
  it("refuses a RESUME to a client that holds nothing, and one from another version", async () => {
    const fake = fakeWebSocket();
    const c = connectRealm("http://127.0.0.1:1", "match", "m-1", {
      ticket: "T",
      WebSocket: fake.WebSocket,
      reconnect: { initialDelayMs: 5, jitter: 0 },
      pingIntervalMs: 0,
    });
    opened.push(c);
    const errors: Error[] = [];
    c.on("error", (e) => errors.push(e));
    const first = fake.last();
    first.accept();
    first.pushRaw(encodeRealmServerMessage({ type: RealmMessageType.Resume, epoch: 0, from: 0, head: 3, avatar: "a", limits: DEFAULT_REALM_LIMITS }));
    expect(first.closedByClient).toEqual({ code: 4000, reason: "bad message from the server" });
    expect(errors[0]!.message).toMatch(/HELLO said the client holds nothing/);
    await waitFor(() => fake.sockets.length === 2);
    const second = fake.last();
    second.accept();
    const state = encodePatch([{ op: "set", path: [], value: { a: 1 } }], new KeyTable());
    second.pushRaw(encodeRealmServerMessage({ type: RealmMessageType.Hydrate, epoch: 4, version: 9, avatar: "a", limits: DEFAULT_REALM_LIMITS, state }));
    expect(c.state).toBe("open");
    second.serverClose(1006);
    await waitFor(() => fake.sockets.length === 3);
    const third = fake.last();
    third.accept();
    expect(decodeRealmClientMessage(third.sent[0]!)).toMatchObject({ epoch: 4, version: 9 });
    third.pushRaw(encodeRealmServerMessage({ type: RealmMessageType.Resume, epoch: 4, from: 8, head: 9, avatar: "a", limits: DEFAULT_REALM_LIMITS }));
    expect(third.closedByClient?.code).toBe(4000);
    expect(errors[1]!.message).toMatch(/RESUME from epoch 4 version 8, but HELLO said epoch 4 version 9/);
    expect(c.document).toEqual({ a: 1 });
  });

  it("refuses a COMMIT before the HYDRATE and a HYDRATE whose state is not one set of the root", async () => {
    const fake = fakeWebSocket();
    const c = connectRealm("http://127.0.0.1:1", "match", "m-1", { ticket: "T", WebSocket: fake.WebSocket, reconnect: false, pingIntervalMs: 0 });
    opened.push(c);
    const ws = fake.last();
    ws.accept();
    ws.pushRaw(encodeRealmServerMessage({ type: RealmMessageType.Commit, version: 1, patch: encodePatch([], new KeyTable()) }));
    expect(c.state).toBe("closed");
    expect(c.error!.message).toMatch(/message type 18 before HYDRATE or RESUME/);

    const c2 = connectRealm("http://127.0.0.1:1", "match", "m-1", { ticket: "T", WebSocket: fake.WebSocket, reconnect: false, pingIntervalMs: 0 });
    opened.push(c2);
    const ws2 = fake.last();
    ws2.accept();
    const state = encodePatch([{ op: "set", path: ["a"], value: 1 }], new KeyTable());
    ws2.pushRaw(encodeRealmServerMessage({ type: RealmMessageType.Hydrate, epoch: 1, version: 1, avatar: "a", limits: DEFAULT_REALM_LIMITS, state }));
    expect(c2.error!.message).toMatch(/HYDRATE state must be one op, set \[\] to an object/);
  });
});
