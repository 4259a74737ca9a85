// The two thin adapters: how one bot joins, sends a move_to and hears its
// ACK/REJECT, with tessera's own client (@tessera/client, clients/ts) and
// with Colyseus's (colyseus.js). Everything else, the bot logic, is shared
// (bots.mjs).
//
// An adapter's connect(id, hooks) resolves once the bot is in the game
// (tessera: WELCOME; Colyseus: the room joined) with
//   { send(x, y) -> key, close() }
// and calls hooks.onAck(key), hooks.onReject(key, error),
// hooks.onClose(code, reason), hooks.onRecv(bytes), hooks.onSend(bytes).
//
// Bytes: both clients run on the `ws` package in Node 20. The adapters
// listen to the underlying `ws` socket's "message" event (a second
// listener beside the client's own) and count each message's payload
// length, and wrap its send() for the upload side: WebSocket message
// payloads, without the 2-10 byte frame headers, TCP or IP.
//
// State decoding (config.state): "decode" hands every message to the client
// library, which decodes each state message (tessera: every FRAME's
// MessagePack snapshot, or with replication its entity changes through
// connectShardGame; Colyseus: every schema patch) as a game would.
// "skip" receives and counts the state messages like the others but drops
// their state before the client library sees them (tessera: FRAME, type 19,
// handed on as [19, tick, last_seq, nil], since with frame acks its
// last_seq carries the ACKs; Colyseus: ROOM_STATE_PATCH, code 15, dropped),
// for both servers alike: decoding
// every player's state in every bot costs the harness O(N^2) CPU per second,
// more than this machine has at N >= 500, and the servers do the same work
// either way. Joins, inputs, ACK/REJECTs and pings always go through the
// client libraries.
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { observe, TS_CLIENT_DIR } from "./common.mjs";

export { TS_CLIENT_DIR };

// tessera: POST /api/dev/join for a ticket, then connectShard.
// A protocol v1 FRAME: a MessagePack fixarray whose first element is 19.
function isTesseraFrame(data) {
  const b = data instanceof ArrayBuffer ? new Uint8Array(data, 0, Math.min(2, data.byteLength)) : data;
  return b.length >= 2 && (b[0] & 0xf0) === 0x90 && b[1] === 19;
}

// A MessagePack uint at b[i]: [value, next index], or null.
function readUint(b, i) {
  const t = b[i];
  if (t === undefined) return null;
  if (t <= 0x7f) return [t, i + 1];
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (t === 0xcc && i + 2 <= b.length) return [b[i + 1], i + 2];
  if (t === 0xcd && i + 3 <= b.length) return [dv.getUint16(i + 1), i + 3];
  if (t === 0xce && i + 5 <= b.length) return [dv.getUint32(i + 1), i + 5];
  if (t === 0xcf && i + 9 <= b.length) return [Number(dv.getBigUint64(i + 1)), i + 9];
  return null;
}

// "skip": the FRAME without its state, [19, tick, last_seq, nil] (the
// client still needs last_seq: with frame acks it carries the ACKs), or
// null when the header does not parse.
function strippedFrame(data) {
  const b = data instanceof ArrayBuffer ? new Uint8Array(data) : data;
  const tick = readUint(b, 2);
  const last = tick && readUint(b, tick[1]);
  if (!last) return null;
  return Uint8Array.from([0x94, 19, ...b.subarray(2, last[1]), 0xc0]).buffer;
}

export async function tesseraAdapter({ url, shard, width, height, replicate, state }) {
  const skipState = state === "skip";
  const client = await import(pathToFileURL(path.join(TS_CLIENT_DIR, "dist/node.js")).href);
  const WS = createRequire(path.join(TS_CLIENT_DIR, "package.json"))("ws");
  return {
    name: "tessera",
    async connect(id, hooks) {
      const res = await fetch(`${url}/api/dev/join`, {
        method: "POST",
        body: JSON.stringify({ shard, kind: "arena", params: { width, height, replicate }, subscriber: id }),
      });
      const join = await res.json();
      if (!res.ok) throw new Error(`dev join: ${join.message ?? res.status}`);
      // The client's WebSocket option: `ws`, observed.
      class CountingWebSocket extends WS {
        constructor(u, protocols) {
          super(u, protocols);
          observe(this, hooks);
        }
        get onmessage() {
          return super.onmessage;
        }
        set onmessage(fn) {
          super.onmessage =
            skipState && typeof fn === "function"
              ? (ev) => {
                  if (!isTesseraFrame(ev.data)) return fn(ev);
                  const stripped = strippedFrame(ev.data);
                  if (stripped) fn({ data: stripped });
                }
              : fn;
        }
      }
      const options = {
        subscriberId: join.subscriberId,
        ticket: join.ticket,
        url,
        WebSocket: CountingWebSocket,
        reconnect: false, // a drop is a result to report, not to hide
      };
      // Replication decoded as a game would: the game client (entities,
      // interpolation timeline, clock); otherwise the plain connection.
      const game = replicate && !skipState ? client.connectShardGame(join.shardId, options) : null;
      const conn = game ? game.connection : client.connectShard(join.shardId, options);
      conn.on("ack", (seq) => hooks.onAck(seq));
      conn.on("reject", (r) => hooks.onReject(r.seq, r.error));
      conn.on("close", (c) => hooks.onClose(c.code, c.reason));
      conn.on("error", () => {}); // the close reports it
      await conn.ready;
      return {
        send: (x, y) => (game ?? conn).send({ move_to: { x, y } }),
        close: () => (game ?? conn).close(),
      };
    },
  };
}

const ROOM_STATE_PATCH = 15; // colyseus.js Protocol.ROOM_STATE_PATCH

// Colyseus: joinById on the one arena room; the room answers "ack"/"reject"
// messages carrying the seq the bot put in its "move_to".
export async function colyseusAdapter({ url, roomId, state }) {
  const skipState = state === "skip";
  const { Client } = await import("colyseus.js");
  return {
    name: "colyseus",
    async connect(id, hooks) {
      const client = new Client(url);
      const room = await client.joinById(roomId, { name: id });
      const ws = room.connection.transport.ws;
      observe(ws, hooks);
      if (skipState) {
        const deliver = ws.onmessage;
        ws.onmessage = (ev) => (ev.data.byteLength > 0 && new Uint8Array(ev.data, 0, 1)[0] === ROOM_STATE_PATCH) || deliver(ev);
      }
      room.onMessage("ack", (m) => hooks.onAck(m.seq));
      room.onMessage("reject", (m) => hooks.onReject(m.seq, m.error));
      room.onLeave((code) => hooks.onClose(code, ""));
      room.onError(() => {});
      let seq = 0;
      return {
        send: (x, y) => {
          const s = ++seq;
          room.send("move_to", { seq: s, x, y });
          return s;
        },
        close: () => room.leave(true).catch(() => {}),
      };
    },
  };
}

export async function makeAdapter(config) {
  if (config.server === "tessera") return tesseraAdapter(config);
  if (config.server === "colyseus") return colyseusAdapter(config);
  throw new Error(`unknown server ${config.server}`);
}
