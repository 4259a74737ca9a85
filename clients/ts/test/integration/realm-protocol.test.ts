// The realm protocol on the wire, against the real server (`tessera dev` on
// a scratch copy of examples/lobby), with raw WebSockets: refusals and their
// close codes before any state is sent, a second HELLO with another
// identity, and the ingress limits (a REJECT per breach, then the forced
// detach).
import { encode } from "@msgpack/msgpack";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodePatch, encodePatch, KeyTable } from "../../src/realm/codec.js";
import {
  decodeRealmServerMessage,
  encodeRealmClientMessage,
  RealmMessageType,
  REALM_HELLO_COMMITS,
  REALM_SUBPROTOCOL,
} from "../../src/realm/protocol.js";
import { scratchApps } from "../helpers/scratch-apps.js";
import { TesseraServer } from "../helpers/tessera-server.js";

let server: TesseraServer;

beforeAll(async () => {
  const [app] = scratchApps("lobby") as [string];
  server = await TesseraServer.start({ appDir: app });
});
afterAll(async () => {
  await server?.stop();
  server?.removeApp();
});

async function ticket(kind: string, key: string, subscriber: string, base = server): Promise<string> {
  const r = await fetch(`${base.url}/api/realms/${kind}/${key}/join`, {
    method: "POST",
    body: JSON.stringify({ subscriber }),
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { ticket: string }).ticket;
}

/** A raw realm connection that records every server message and the close. */
class Raw {
  readonly messages: any[] = [];
  closed?: { code: number; reason: string };
  readonly ws: WebSocket;
  readonly keys = new KeyTable();
  private readonly opened: Promise<void>;

  constructor(path: string, base = server) {
    this.ws = new WebSocket(`ws://127.0.0.1:${base.port}${path}`, [REALM_SUBPROTOCOL]);
    this.ws.binaryType = "nodebuffer";
    this.ws.on("message", (data: Buffer) => this.messages.push(decodeRealmServerMessage(data)));
    this.ws.on("close", (code, reason) => (this.closed = { code, reason: reason.toString() }));
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve());
      this.ws.once("error", reject);
    });
  }
  async hello(ticket: string, epoch = 0, version = 0, flags = 0): Promise<void> {
    await this.opened;
    this.ws.send(encodeRealmClientMessage({ type: RealmMessageType.Hello, protocol: 1, ticket, epoch, version, flags }));
  }
  write(seq: number, ops: any[]): void {
    this.ws.send(encodeRealmClientMessage({ type: RealmMessageType.Write, seq, patch: encodePatch(ops, this.keys) }));
  }
  async until(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(this.messages)}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  async closedWith(): Promise<{ code: number; reason: string }> {
    await this.until(() => this.closed !== undefined, "the close");
    return this.closed!;
  }
}

describe("the realm protocol on the real server", () => {
  it("refuses a bad kind, a bad key, a forged or wrong ticket and a text frame, sending no state", async () => {
    const good = await ticket("match", "p1", "alice");
    const cases: [string, (r: Raw) => Promise<void> | void, number][] = [
      ["/realm/nope/p1", (r) => r.hello(good), 4004],
      ["/realm/match/bad%20key", (r) => r.hello(good), 4004],
      ["/realm/match/p2", (r) => r.hello(good), 4003],
      ["/realm/match/p1", (r) => r.hello(good.slice(0, -2) + "xx"), 4001],
      ["/realm/match/p1", (r) => r.hello(good, 0, 0).then(() => r.ws.send("hello")), 4000],
    ];
    for (const [path, act, code] of cases) {
      const r = new Raw(path);
      await act(r);
      const closed = await r.closedWith();
      expect(closed.code, `${path}: ${closed.reason}`).toBe(code);
      if (code !== 4000) expect(r.messages, path).toEqual([]);
    }
  });

  it("a write before HELLO closes with 4010", async () => {
    const r = new Raw("/realm/match/p1");
    await new Promise<void>((resolve) => r.ws.once("open", () => resolve()));
    r.write(1, [{ op: "append", path: ["chat"], value: "x" }]);
    expect((await r.closedWith()).code).toBe(4010);
  });

  it("a second HELLO with another identity is answered as that identity", async () => {
    const r = new Raw("/realm/presence/p3");
    await r.hello(await ticket("presence", "p3", "ann"));
    await r.until(() => r.messages.length >= 1, "the hydrate");
    expect(r.messages[0]).toMatchObject({ type: RealmMessageType.Hydrate, avatar: "ann" });
    await r.hello(await ticket("presence", "p3", "ben"));
    await r.until(() => r.messages.some((m) => m.avatar === "ben"), "ben's answer");
    // ann's cursor is now refused: this connection writes as ben.
    r.write(1, [{ op: "set", path: ["cursors", "ann"], value: { x: 1 } }]);
    r.write(2, [{ op: "set", path: ["cursors", "ben"], value: { x: 2 } }]);
    await r.until(() => r.messages.some((m) => m.type === RealmMessageType.Ack), "the ack");
    const reject = r.messages.find((m) => m.type === RealmMessageType.Reject);
    expect(reject).toMatchObject({ seq: 1, code: "permission_denied" });
    expect(r.messages.find((m) => m.type === RealmMessageType.Ack)).toMatchObject({ seq: 2 });
    r.ws.close();
  });

  it("a HELLO without flags gets a COMMIT or ACK per version; with the COMMITS flag, one COMMITS per group commit", async () => {
    const old = new Raw("/realm/presence/c1");
    await old.hello(await ticket("presence", "c1", "old"));
    const batched = new Raw("/realm/presence/c1");
    await batched.hello(await ticket("presence", "c1", "new"), 0, 0, REALM_HELLO_COMMITS);
    await old.until(() => old.messages.length >= 1, "old's hydrate");
    await batched.until(() => batched.messages.length >= 1, "new's hydrate");
    // Every commit each connection read, in order, its patch decoded (the
    // presence rows of both attaches come too).
    type Read = { version: number; ops?: any[]; seq?: number };
    const reads = (r: Raw): Read[] => {
      const keys = new KeyTable();
      decodePatch(r.messages[0].state, keys); // the HYDRATE announces keys too
      return r.messages.slice(1).flatMap((m): Read[] => {
        const one = (version: number, patch?: Uint8Array, seq?: number): Read => ({
          version,
          ...(patch ? { ops: decodePatch(patch, keys) } : {}),
          ...(seq !== undefined ? { seq } : {}),
        });
        if (m.type === RealmMessageType.Commit) return [one(m.version, m.patch, m.seq)];
        if (m.type === RealmMessageType.Ack) return [one(m.version, undefined, m.seq)];
        if (m.type === RealmMessageType.Commits) return m.entries.map((e: any) => one(e.version, e.patch, e.seq));
        return [];
      });
    };
    const cursor = (r: Raw, who: string) => reads(r).filter((c) => c.ops?.some((op) => op.path[0] === "cursors" && op.path[1] === who));
    // Three writes sent together, most likely committed as one group.
    for (let i = 1; i <= 3; i++) batched.write(i, [{ op: "set", path: ["cursors", "new"], value: { x: i } }]);
    await old.until(() => cursor(old, "new").length === 3, "old's three COMMITs");
    await batched.until(() => reads(batched).filter((c) => c.seq !== undefined).length === 3, "new's three acks");
    // The old client: a COMMIT per version, never a COMMITS.
    expect(old.messages.some((m) => m.type === RealmMessageType.Commits)).toBe(false);
    const seen = cursor(old, "new");
    expect(seen.map((c) => c.ops![0].value)).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }]);
    // The writer with the flag: only COMMITS after its HYDRATE, its three
    // writes as ACK entries (no patch) at the versions the old one read.
    expect(batched.messages.slice(1).every((m) => m.type === RealmMessageType.Commits)).toBe(true);
    const acks = reads(batched).filter((c) => c.seq !== undefined);
    expect(acks).toEqual(seen.map((c, i) => ({ version: c.version, seq: i + 1 })));
    // Versions increase across the COMMITS messages.
    const versions = reads(batched).map((c) => c.version);
    expect([...versions].sort((x, y) => x - y)).toEqual(versions);
    expect(new Set(versions).size).toBe(versions.length);
    // The old client writes; the new one reads it as a COMMITS entry with its patch.
    old.write(1, [{ op: "set", path: ["cursors", "old"], value: { x: 9 } }]);
    await old.until(() => old.messages.some((m) => m.type === RealmMessageType.Ack), "old's ACK");
    const ack = old.messages.find((m) => m.type === RealmMessageType.Ack);
    expect(ack).toMatchObject({ seq: 1 });
    await batched.until(() => reads(batched).some((c) => c.version === ack.version), "old's write");
    expect(reads(batched).find((c) => c.version === ack.version)).toEqual({
      version: ack.version,
      ops: [{ op: "set", path: ["cursors", "old"], value: { x: 9 } }],
    });
    old.ws.close();
    batched.ws.close();
  });

  it("answers each breach of the ingress limits with a REJECT, then detaches after ten", async () => {
    const r = new Raw("/realm/match/p4");
    await r.hello(await ticket("match", "p4", "alice"));
    await r.until(() => r.messages.length >= 1, "the hydrate");
    const tooMany = Array.from({ length: 65 }, (_, i) => ({ op: "append", path: ["chat"], value: i }));
    const longKey = [{ op: "set", path: ["notes", "alice"], value: { ["k".repeat(129)]: 1 } }];
    r.write(1, tooMany);
    r.write(2, longKey);
    r.write(3, [{ op: "append", path: ["chat"], value: "fine" }]);
    await r.until(() => r.messages.filter((m) => m.type !== RealmMessageType.Hydrate).length >= 3, "three answers");
    const rejects = r.messages.filter((m) => m.type === RealmMessageType.Reject);
    expect(rejects.map((m) => [m.seq, m.code])).toEqual([
      [1, "limits_exceeded"],
      [2, "limits_exceeded"],
    ]);
    expect(rejects[0].message).toContain("maxPatchesPerFrame");
    expect(rejects[1].message).toContain("maxRecordKeyLength");
    // The key tables are still in step: the good write after two refused
    // ones is acknowledged.
    expect(r.messages.find((m) => m.type === RealmMessageType.Ack)).toMatchObject({ seq: 3 });
    for (let seq = 4; seq <= 12; seq++) r.write(seq, tooMany);
    const closed = await r.closedWith();
    expect(closed.code).toBe(4013);
    expect(r.messages.filter((m) => m.type === RealmMessageType.Reject).length).toBe(11);
  });

  it("intents go through the match module: a legal move commits, the rest are refused with its reason", async () => {
    await server.waitForModule("match-logic");
    const x = new Raw("/realm/match/p6");
    const o = new Raw("/realm/match/p6");
    await x.hello(await ticket("match", "p6", "xena"));
    await o.hello(await ticket("match", "p6", "otto"));
    await x.until(() => x.messages.length >= 1, "x's hydrate");
    await o.until(() => o.messages.length >= 1, "o's hydrate");
    const intent = (r: Raw, seq: number, name: string, args: unknown) =>
      r.ws.send(encode([5, seq, name, JSON.stringify(args)]));
    intent(x, 1, "move", { cell: 4 }); // no seat yet
    x.write(2, [{ op: "set", path: ["seats", "xena"], value: "X" }]);
    o.write(1, [{ op: "set", path: ["seats", "otto"], value: "O" }]);
    await x.until(() => x.messages.some((m) => m.type === RealmMessageType.Ack && m.seq === 2), "x's seat");
    await o.until(() => o.messages.some((m) => m.type === RealmMessageType.Ack && m.seq === 1), "o's seat");
    intent(o, 2, "move", { cell: 0 }); // X starts
    await o.until(() => o.messages.some((m) => m.type === RealmMessageType.Reject && m.seq === 2), "o's first refusal");
    intent(x, 3, "move", { cell: 4 });
    await x.until(() => x.messages.some((m) => m.type === RealmMessageType.Ack && m.seq === 3), "x's move");
    intent(o, 3, "move", { cell: 4 }); // taken
    await o.until(() => o.messages.filter((m) => m.type === RealmMessageType.Reject).length >= 2, "o's refusals");
    const xr = x.messages.find((m) => m.type === RealmMessageType.Reject);
    expect(xr).toMatchObject({ seq: 1, code: "refused", message: "take a seat (X or O) first" });
    const or = o.messages.filter((m) => m.type === RealmMessageType.Reject);
    expect(or.map((m) => [m.seq, m.code, m.message])).toEqual([
      [2, "refused", "it is X's turn"],
      [3, "refused", "cell 4 is taken"],
    ]);
    // x's move is acknowledged with its version and reached o as a commit.
    await x.until(() => x.messages.some((m) => m.type === RealmMessageType.Ack && m.seq === 3), "x's move");
    const ack = x.messages.find((m) => m.type === RealmMessageType.Ack && m.seq === 3);
    const seen = o.messages.find((m) => m.type === RealmMessageType.Commit && m.version === ack.version);
    expect(seen).toBeDefined();
    // Clients cannot append moves themselves: only the module writes them.
    o.write(4, [{ op: "append", path: ["moves"], value: { by: "otto", cell: 1, mark: "O" } }]);
    await o.until(() => o.messages.some((m) => m.type === RealmMessageType.Reject && m.seq === 4), "o's write");
    expect(o.messages.find((m) => m.seq === 4 && m.type === RealmMessageType.Reject).code).toBe("permission_denied");
    x.ws.close();
    o.ws.close();
  });

  it("a deployment floor of encrypted refuses before any state", async () => {
    const [app] = scratchApps("lobby") as [string];
    const strict = await TesseraServer.start({ appDir: app, env: { TESSERA_REALM_SECURITY: "encrypted" } });
    try {
      const r = new Raw("/realm/match/p5", strict);
      await r.hello(await ticket("match", "p5", "alice", strict));
      const closed = await r.closedWith();
      expect(closed.code).toBe(4012);
      expect(closed.reason).toContain("insufficient_security");
      expect(r.messages).toEqual([]);
    } finally {
      await strict.stop();
      strict.removeApp();
    }
  });
});
