// COMMITS: connectRealm asks for it in its HELLO and applies each entry
// exactly as the COMMIT or ACK it stands for. The same commits and answers
// are sent to one realm as separate messages and to another grouped as one
// COMMITS; what the clients show (events, documents, write outcomes,
// rollbacks) must be the same.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { WebSocketConstructor } from "../../src/client.js";
import { connectRealm, type RealmConnection } from "../../src/realm/connect.js";
import { type Op } from "../../src/realm/patch.js";
import { REALM_HELLO_COMMITS, RealmMessageType } from "../../src/realm/protocol.js";
import { FakeRealmServer, waitFor } from "../helpers/fake-realm-server.js";

let server: FakeRealmServer;
const opened: RealmConnection[] = [];

beforeEach(async () => {
  server = await FakeRealmServer.start();
  server.tickets.set("T-ann", "ann");
  server.tickets.set("T-bob", "bob");
});
afterEach(async () => {
  for (const c of opened.splice(0)) c.close();
  await server.stop();
});

function connect(key: string, ticket: string): RealmConnection {
  const c = connectRealm(server.url, "match", key, {
    ticket,
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    reconnect: false,
    pingIntervalMs: 0,
  });
  opened.push(c);
  return c;
}

/** Everything a client shows, in order. */
function record(c: RealmConnection) {
  const events: unknown[] = [];
  c.on("commit", (x) => events.push({ commit: x, document: structuredClone(c.document) }));
  c.on("reject", (x) => events.push({ reject: x, document: structuredClone(c.document) }));
  c.on("change", () => events.push("change"));
  return events;
}

/**
 * ann writes four times (held by the server); then, at once: another
 * writer's commit, ann's first write as sent, her second sliced, a server
 * commit, her third as sent, and a delete that makes her fourth (still
 * pending) inapplicable. bob reads it all.
 */
async function scenario(key: string, grouped: boolean) {
  const id = `match/${key}`;
  const realm = server.realm(id);
  realm.doc = { players: {}, log: [] };
  realm.version = 5;
  const ann = connect(key, "T-ann");
  const bob = connect(key, "T-bob");
  await Promise.all([ann.ready, bob.ready]);
  const annEvents = record(ann);
  const bobEvents = record(bob);
  server.onWrite = () => ({ hold: true });
  const writes = [
    ann.set(["players", "ann"], { x: 1 }),
    ann.set(["players", "ann", "y"], 2),
    ann.append(["log"], "hi"),
    ann.set(["players", "ann", "z"], 3),
  ];
  await waitFor(() => server.held.length === 4);
  const held = [...server.held];
  const annConn = server.conns.find((c) => c.realmId === id && c.avatar === "ann")!;
  const before = annConn.sentTypes.length;
  const del: Op[] = [{ op: "delete", path: ["players", "ann"] }];
  const send = () => {
    server.commit(id, [{ op: "set", path: ["players", "zed"], value: 1 }]);
    server.release(held[0]!);
    server.release(held[1]!, { commitAs: [{ op: "set", path: ["players", "ann", "y"], value: 20 }] });
    server.commit(id, [{ op: "append", path: ["log"], value: "server" }]);
    server.release(held[2]!);
    server.commit(id, del);
  };
  if (grouped) server.group(send);
  else send();
  server.onWrite = undefined;
  const outcomes = await Promise.all(writes.slice(0, 3).map((w) => w.done));
  await waitFor(() => bob.version === 11 && ann.version === 11 && annEvents.some((e) => typeof e === "object" && "reject" in e!));
  server.release(held[3]!); // the server refuses it too: players/ann is gone
  const last = await writes[3]!.done;
  return {
    sent: annConn.sentTypes.slice(before),
    ann: { events: annEvents, document: ann.document, confirmed: ann.confirmed, version: ann.version, pending: ann.pendingWrites },
    bob: { events: bobEvents, document: bob.document, version: bob.version },
    outcomes: [...outcomes, last],
  };
}

describe("COMMITS", () => {
  it("is asked for in the HELLO", async () => {
    const ann = connect("k", "T-ann");
    await ann.ready;
    const hello = server.conns[0]!.received[0]!.msg;
    expect(hello).toMatchObject({ type: RealmMessageType.Hello, flags: REALM_HELLO_COMMITS });
  });

  it("applies each entry in order exactly as the separate COMMITs and ACKs: confirms, slices and rolls back the same", async () => {
    const separate = await scenario("separate", false);
    const grouped = await scenario("grouped", true);
    // What went to ann: six messages one way, one COMMITS the other (then
    // the REJECT of the fourth write).
    expect(separate.sent).toEqual([
      RealmMessageType.Commit,
      RealmMessageType.Ack,
      RealmMessageType.Commit,
      RealmMessageType.Commit,
      RealmMessageType.Ack,
      RealmMessageType.Commit,
      RealmMessageType.Reject,
    ]);
    expect(grouped.sent).toEqual([RealmMessageType.Commits, RealmMessageType.Reject]);
    // The same to see, entry by entry.
    expect(grouped.ann).toEqual(separate.ann);
    expect(grouped.bob).toEqual(separate.bob);
    expect(grouped.outcomes).toEqual(separate.outcomes);
    // And what that is: three writes confirmed (the second as sliced), the
    // fourth rolled back when the delete made it inapplicable.
    expect(grouped.outcomes.slice(0, 3)).toEqual([
      { status: "committed", version: 7 },
      { status: "committed", version: 8 },
      { status: "committed", version: 10 },
    ]);
    expect(grouped.outcomes[3]).toMatchObject({ status: "rejected", local: true });
    expect(grouped.ann.document).toEqual({ players: { zed: 1 }, log: ["server", "hi"] });
    expect(grouped.ann.pending).toBe(0);
    const commits = grouped.ann.events.filter((e): e is { commit: any } => typeof e === "object" && "commit" in e!);
    expect(commits.map((e) => [e.commit.version, e.commit.own, e.commit.sliced])).toEqual([
      [6, false, false],
      [7, true, false],
      [8, true, true],
      [9, false, false],
      [10, true, false],
      [11, false, false],
    ]);
  });
});
