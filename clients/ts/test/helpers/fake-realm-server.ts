// An in-process realm server on a real WebSocket (the `ws` package) that
// speaks tessera.realm.v1 as docs/protocol.md "Realms" says: HELLO ->
// HYDRATE or RESUME + the missed COMMITs, WRITE -> ingress limits (ops,
// bytes, token bucket), apply -> ACK to the writer and COMMIT to the others.
// Tests steer it with `onWrite` (refuse, slice, hold) and by editing realms;
// inside group(), what it would send as COMMITs and ACKs to a connection
// whose HELLO set the COMMITS flag goes out as one COMMITS at the end.
import { type AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import { decodePatch, encodePatch, KeyTable } from "../../src/realm/codec.js";
import { applyPatch, type JsonObject, type Op } from "../../src/realm/patch.js";
import {
  type CommitsEntry,
  DEFAULT_REALM_LIMITS,
  decodeRealmClientMessage,
  REALM_HELLO_COMMITS,
  encodeRealmServerMessage,
  type RealmClientMessage,
  type RealmLimits,
  RealmMessageType,
  type RealmServerMessage,
} from "../../src/realm/protocol.js";

export interface FakeRealm {
  epoch: number;
  version: number;
  doc: JsonObject;
  log: { version: number; ops: Op[] }[];
}

export interface FakeConn {
  ws: WebSocket;
  path: string;
  protocol: string;
  avatar: string | undefined;
  realmId: string;
  inKeys: KeyTable;
  outKeys: KeyTable;
  /** Every message the client sent, decoded, with its arrival time. */
  received: { at: number; msg: RealmClientMessage; ops?: Op[] }[];
  tokens: number;
  last: number;
  /** The HELLO's flags. */
  flags: number;
  /** The type of every message sent to the client, in order. */
  sentTypes: number[];
}

/** What onWrite decides for a write: the default is to apply it. */
export type WriteDecision =
  | undefined
  | { reject: string; message: string }
  | { commitAs: Op[] } // apply these instead, answer with COMMIT + seq
  | { hold: true }; // no answer (the test releases it later, or never)

export class FakeRealmServer {
  readonly wss: WebSocketServer;
  readonly realms = new Map<string, FakeRealm>();
  readonly conns: FakeConn[] = [];
  limits: RealmLimits = { ...DEFAULT_REALM_LIMITS };
  logWindow = 512;
  /** Ticket -> avatar; a ticket not here closes with 4001. `close:<code>` closes with that code. */
  tickets = new Map<string, string>();
  onWrite: ((conn: FakeConn, seq: number, ops: Op[]) => WriteDecision) | undefined;
  held: { conn: FakeConn; seq: number; ops: Op[] }[] = [];
  rateRejects = 0;

  private constructor(wss: WebSocketServer) {
    this.wss = wss;
    wss.on("connection", (ws, req) => this.accept(ws, req.url ?? "", ws.protocol));
  }

  static async start(): Promise<FakeRealmServer> {
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, handleProtocols: (p) => (p.has("tessera.realm.v1") ? "tessera.realm.v1" : false) });
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
    return new FakeRealmServer(wss);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.wss.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const c of this.conns) c.ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  realm(id: string): FakeRealm {
    let r = this.realms.get(id);
    if (!r) this.realms.set(id, (r = { epoch: 7, version: 0, doc: {}, log: [] }));
    return r;
  }

  /** Open connections of a realm. */
  live(id: string): FakeConn[] {
    return this.conns.filter((c) => c.realmId === id && c.ws.readyState === WebSocket.OPEN && c.avatar !== undefined);
  }

  /** Messages of type `type` that connection `c` sent. */
  sent<T extends RealmClientMessage["type"]>(c: FakeConn, type: T): Extract<RealmClientMessage, { type: T }>[] {
    return c.received.filter((r) => r.msg.type === type).map((r) => r.msg as Extract<RealmClientMessage, { type: T }>);
  }

  send(c: FakeConn, msg: RealmServerMessage): void {
    const grouped = this.grouped?.get(c) ?? (this.grouped && c.flags & REALM_HELLO_COMMITS ? [] : undefined);
    if (grouped && (msg.type === RealmMessageType.Commit || msg.type === RealmMessageType.Ack)) {
      grouped.push(msg.type === RealmMessageType.Ack ? { version: msg.version, seq: msg.seq } : { version: msg.version, patch: msg.patch, ...(msg.seq === undefined ? {} : { seq: msg.seq }) });
      this.grouped!.set(c, grouped);
      return;
    }
    c.sentTypes.push(msg.type);
    c.ws.send(encodeRealmServerMessage(msg));
  }

  /** Runs `fn`; the COMMITs and ACKs it sends to connections that asked for COMMITS go out as one COMMITS each. */
  group(fn: () => void): void {
    this.grouped = new Map();
    try {
      fn();
    } finally {
      const grouped = this.grouped;
      this.grouped = undefined;
      for (const [c, entries] of grouped) this.send(c, { type: RealmMessageType.Commits, entries });
    }
  }

  private grouped: Map<FakeConn, CommitsEntry[]> | undefined;

  /** A commit by the server itself (or another writer), broadcast to every live connection except `except`. */
  commit(id: string, ops: Op[], except?: FakeConn): number {
    const r = this.realm(id);
    r.doc = applyPatch(r.doc, ops);
    r.version++;
    r.log.push({ version: r.version, ops });
    for (const c of this.live(id)) {
      if (c === except) continue;
      this.send(c, { type: RealmMessageType.Commit, version: r.version, patch: encodePatch(ops, c.outKeys) });
    }
    return r.version;
  }

  /** Answers a held write now, as `decision` says (default: apply it). */
  release(h: { conn: FakeConn; seq: number; ops: Op[] }, decision?: WriteDecision): void {
    this.held = this.held.filter((x) => x !== h);
    this.applyWrite(h.conn, h.seq, h.ops, decision);
  }

  private accept(ws: WebSocket, path: string, protocol: string): void {
    const m = /^\/realm\/([^/]+)\/([^/]+)$/.exec(path);
    const conn: FakeConn = {
      ws,
      path,
      protocol,
      avatar: undefined,
      realmId: m ? `${m[1]}/${m[2]}` : "",
      inKeys: new KeyTable(),
      outKeys: new KeyTable(),
      received: [],
      tokens: this.limits.writeRateBurst,
      last: Date.now(),
      flags: 0,
      sentTypes: [],
    };
    this.conns.push(conn);
    if (!m) {
      ws.close(4004, "no such realm");
      return;
    }
    ws.on("message", (data, isBinary) => {
      if (!isBinary) {
        ws.close(4000, "text message");
        return;
      }
      let msg: RealmClientMessage;
      try {
        msg = decodeRealmClientMessage(data as Buffer);
      } catch (e) {
        ws.close(4000, (e as Error).message.slice(0, 100));
        return;
      }
      this.onMessage(conn, msg);
    });
  }

  private onMessage(c: FakeConn, msg: RealmClientMessage): void {
    const entry: FakeConn["received"][number] = { at: Date.now(), msg };
    c.received.push(entry);
    if (c.avatar === undefined && msg.type !== RealmMessageType.Hello) {
      c.ws.close(4010, "HELLO expected");
      return;
    }
    switch (msg.type) {
      case RealmMessageType.Hello:
        c.flags = msg.flags ?? 0;
        return this.hello(c, msg.ticket, msg.epoch, msg.version);
      case RealmMessageType.Ping:
        return this.send(c, { type: RealmMessageType.Pong, nonce: msg.nonce });
      case RealmMessageType.Pong:
        return;
      case RealmMessageType.Write: {
        let ops: Op[];
        try {
          ops = decodePatch(msg.patch, c.inKeys, { maxBytes: this.limits.maxFrameBytes, maxKeyLength: 1024, maxDepth: 32 });
        } catch (e) {
          c.ws.close(4000, (e as Error).message.slice(0, 100));
          return;
        }
        entry.ops = ops;
        return this.write(c, msg.seq, msg.patch.length, ops);
      }
    }
  }

  private hello(c: FakeConn, ticket: string, epoch: number, version: number): void {
    const close = /^close:(\d+)$/.exec(ticket);
    if (close) {
      c.ws.close(Number(close[1]), "refused by the test");
      return;
    }
    const avatar = this.tickets.get(ticket);
    if (avatar === undefined) {
      c.ws.close(4001, "ticket_invalid");
      return;
    }
    c.avatar = avatar;
    const r = this.realm(c.realmId);
    const limits = { ...this.limits };
    const resumable =
      !(epoch === 0 && version === 0) && epoch === r.epoch && version <= r.version && r.version - version <= this.logWindow;
    if (resumable) {
      this.send(c, { type: RealmMessageType.Resume, epoch, from: version, head: r.version, avatar, limits });
      for (const e of r.log) {
        if (e.version > version) this.send(c, { type: RealmMessageType.Commit, version: e.version, patch: encodePatch(e.ops, c.outKeys) });
      }
      return;
    }
    const state = encodePatch([{ op: "set", path: [], value: r.doc }], c.outKeys);
    this.send(c, { type: RealmMessageType.Hydrate, epoch: r.epoch, version: r.version, avatar, limits, state });
  }

  private write(c: FakeConn, seq: number, bytes: number, ops: Op[]): void {
    const l = this.limits;
    const reject = (code: string, message: string) => this.send(c, { type: RealmMessageType.Reject, seq, code, message });
    if (bytes > l.maxFrameBytes) {
      return reject("limits_exceeded", `limits_exceeded: maxFrameBytes: the frame is ${bytes} bytes, at most ${l.maxFrameBytes}`);
    }
    if (ops.length > l.maxPatchesPerFrame) {
      return reject("limits_exceeded", `limits_exceeded: maxPatchesPerFrame: ${ops.length} ops in one frame, at most ${l.maxPatchesPerFrame}; split the write`);
    }
    const now = Date.now();
    c.tokens = Math.min(l.writeRateBurst, c.tokens + ((now - c.last) * l.writeRatePerSecond) / 1000);
    c.last = now;
    if (c.tokens < 1) {
      this.rateRejects++;
      const wait = Math.ceil(((1 - c.tokens) * 1000) / l.writeRatePerSecond);
      return reject(
        "limits_exceeded",
        `limits_exceeded: writeRatePerSecond: more than ${l.writeRatePerSecond} writes/s (burst ${l.writeRateBurst}); retry in ${wait} ms`,
      );
    }
    c.tokens -= 1;
    const decision = this.onWrite?.(c, seq, ops);
    if (decision && "hold" in decision) {
      this.held.push({ conn: c, seq, ops });
      return;
    }
    this.applyWrite(c, seq, ops, decision);
  }

  private applyWrite(c: FakeConn, seq: number, ops: Op[], decision: WriteDecision): void {
    if (decision && "reject" in decision) {
      this.send(c, { type: RealmMessageType.Reject, seq, code: decision.reject, message: decision.message });
      return;
    }
    const r = this.realm(c.realmId);
    const applied = decision && "commitAs" in decision ? decision.commitAs : ops;
    try {
      r.doc = applyPatch(r.doc, ops);
    } catch (e) {
      this.send(c, { type: RealmMessageType.Reject, seq, code: "invalid_patch", message: (e as Error).message });
      return;
    }
    r.version++;
    r.log.push({ version: r.version, ops });
    if (c.ws.readyState === WebSocket.OPEN) {
      if (applied === ops) this.send(c, { type: RealmMessageType.Ack, seq, version: r.version });
      else this.send(c, { type: RealmMessageType.Commit, version: r.version, patch: encodePatch(applied, c.outKeys), seq });
    }
    for (const other of this.live(c.realmId)) {
      if (other === c) continue;
      this.send(other, { type: RealmMessageType.Commit, version: r.version, patch: encodePatch(ops, other.outKeys) });
    }
  }
}

/** Polls `cond` until it holds (or fails the test after `ms`). */
export async function waitFor(cond: () => boolean, ms = 3000, what = "condition"): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
