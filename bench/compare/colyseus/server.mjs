// The tessera example arena (examples/arena/shards/arena/arena.cc) written
// as a Colyseus room, for the side-by-side comparison in bench/compare/.
//
//   node server.mjs [--port P] [--host H] [--width 800] [--height 500]
//
// Prints one line `colyseus-arena: listening on HOST:PORT room ROOMID` once
// the room exists, then serves until SIGINT/SIGTERM.
//
// The same game as arena.cc:
// - the state is the players {id, x, y} (a MapSchema keyed by id); a
//   player is added by its first accepted move_to and kept after it leaves
//   (arena.cc keeps players too);
// - "move_to" {seq, x, y} is accepted inside [0, width] x [0, height] and
//   refused otherwise with arena.cc's text, "outside the arena";
// - tessera applies inputs at its next 20 Hz tick and sends ACK/REJECT
//   after that tick; Colyseus has no per-input acknowledgement, so the room
//   queues each move_to, applies the queue on the next simulation tick (every
//   50 ms) and then sends the sender "ack" {seq} or "reject" {seq, error};
// - state patches go out at 20 Hz (setPatchRate(50)), the tick rate of the
//   tessera arena (tessera.json: tickRate 20).
// Coordinates are float32 in both (arena.cc's Player has float x, y).
import { Room, Server, matchMaker } from "@colyseus/core";
import { MapSchema, Schema, defineTypes } from "@colyseus/schema";
import { WebSocketTransport } from "@colyseus/ws-transport";

const OUTSIDE = "outside the arena";

export class Player extends Schema {
  constructor(id, x, y) {
    super();
    this.id = id;
    this.x = x;
    this.y = y;
  }
}
defineTypes(Player, { id: "string", x: "float32", y: "float32" });

export class ArenaState extends Schema {
  constructor() {
    super();
    this.players = new MapSchema();
  }
}
defineTypes(ArenaState, { players: { map: Player } });

export class ArenaRoom extends Room {
  onCreate(options) {
    this.width = Number(options?.width ?? 800);
    this.height = Number(options?.height ?? 500);
    if (!(this.width > 0 && this.height > 0)) {
      throw new Error("width and height must be positive");
    }
    this.autoDispose = false; // like a tessera shard: it outlives its players
    this.setState(new ArenaState());
    this.setPatchRate(50); // 20 Hz, tessera.json's tickRate
    this.pending = []; // [client, message] received since the last tick
    this.onMessage("move_to", (client, message) => {
      this.pending.push(client, message);
    });
    this.setSimulationInterval(() => this.tick(), 50);
  }

  onJoin(client, options) {
    // The player's id: the bot's name (tessera's subscriber id), else the
    // session id.
    const name = typeof options?.name === "string" && options.name !== "" ? options.name : client.sessionId;
    client.userData = { id: name };
  }

  // Applies the inputs received since the last tick, in arrival order, then
  // acknowledges each to its sender (arena.cc's apply_input, then tessera's
  // ACK/REJECT after the tick).
  tick() {
    const pending = this.pending;
    if (pending.length === 0) return;
    this.pending = [];
    const players = this.state.players;
    for (let i = 0; i < pending.length; i += 2) {
      const client = pending[i];
      const m = pending[i + 1];
      const seq = m?.seq;
      const x = Number(m?.x);
      const y = Number(m?.y);
      // The same test as arena.cc (NaN fails every comparison there and
      // passes through; here a NaN is refused, a malformed message).
      if (!(x >= 0 && x <= this.width && y >= 0 && y <= this.height)) {
        client.send("reject", { seq, error: OUTSIDE });
        continue;
      }
      const id = client.userData.id;
      const p = players.get(id);
      if (p === undefined) {
        players.set(id, new Player(id, x, y));
      } else {
        p.x = x;
        p.y = y;
      }
      client.send("ack", { seq });
    }
  }
}

function parseArgs(argv) {
  const o = { port: 2567, host: "127.0.0.1", width: 800, height: 500 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--port") o.port = Number(v());
    else if (a === "--host") o.host = v();
    else if (a === "--width") o.width = Number(v());
    else if (a === "--height") o.height = Number(v());
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const server = new Server({ transport: new WebSocketTransport({}), greet: false });
  server.define("arena", ArenaRoom);
  await server.listen(o.port, o.host);
  // One room for everyone, like the one tessera shard: the bots join it.
  const room = await matchMaker.createRoom("arena", { width: o.width, height: o.height });
  console.log(`colyseus-arena: listening on ${o.host}:${o.port} room ${room.roomId}`);
  // Colyseus shuts down gracefully on SIGINT/SIGTERM by itself.
}

main().catch((e) => {
  console.error(`colyseus-arena: ${e?.stack ?? e}`);
  process.exit(1);
});
