// connectShardGame against the real server: `tessera dev` on a scratch copy
// of examples/zone (interest radius 300, hysteresis 15, 400 wandering NPCs;
// see the top comment of examples/zone/shards/zone/zone.cc). Two players,
// "alice" and "scout-1", join shard "zone-1" and the test renders frames in a
// loop as a page would, checking what each one holds.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectedShardGame, connectShardGame, decodePayload } from "../../src/node.js";
import { scratchApps } from "../helpers/scratch-apps.js";
import { TesseraServer } from "../helpers/tessera-server.js";

type Input = { join: Record<string, never> } | { move_to: { x: number; y: number } };

const RADIUS = 300; // the zone's interest radius
const HYSTERESIS = 15; // an entity leaves a view this far beyond the radius
const NEAR = 50; // stealthed units show to non-scouts within this
// The view is decided on positions up to a tick older than those replicated:
// a tick or two of walking (players 7.5 units a tick, NPCs up to 3) apart.
const SLACK = 20;
const NPCS = 400;
const C_KIND = 1;
const C_NAME = 2;
const C_HP = 3;

let server: TesseraServer;

/** Decoded MessagePack component values, cached per byte array. */
const decoded = new WeakMap<Uint8Array, unknown>();
function component(components: ReadonlyMap<number, Uint8Array>, id: number): unknown {
  const bytes = components.get(id);
  if (bytes === undefined) return undefined;
  if (!decoded.has(bytes)) decoded.set(bytes, decodePayload("msgpack", bytes));
  return decoded.get(bytes);
}

interface Unit {
  id: number;
  x: number;
  y: number;
}

/** A player: the game plus what the render loop saw. */
class Player {
  readonly entered: number[] = [];
  readonly left: number[] = [];
  /** Checks that failed, with what was seen (kept short). */
  readonly violations: string[] = [];
  maxDistance = 0;
  maxHeld = 0;
  frames = 0;
  me: Unit | undefined;

  constructor(
    readonly name: string,
    readonly game: ConnectedShardGame<Input>,
  ) {}

  get scout(): boolean {
    return this.name.startsWith("scout");
  }

  /** Renders one frame and checks what is drawn and what the replica holds. */
  step(now: number): void {
    const game = this.game;
    game.frame(now);
    this.frames++;
    this.entered.push(...game.entered);
    this.left.push(...game.left);
    this.maxHeld = Math.max(this.maxHeld, game.entities.size, game.replica.entities.size);

    // Drawn (interpolated) entities: both ends of an interpolation were in
    // view, so the distance to my unit, drawn at the same tick, is too.
    this.me = undefined;
    for (const e of game.entities.values()) {
      if (component(e.components, C_NAME) === this.name) this.me = { id: e.id, x: e.x, y: e.y };
    }
    if (this.me !== undefined) {
      for (const e of game.entities.values()) this.checkInView("drawn", e.id, e.x, e.y, e.components, this.me);
    }
    // The replica: the newest received state.
    const p = game.precision;
    let mine: Unit | undefined;
    for (const [id, e] of game.replica.entities) {
      if (component(e.components, C_NAME) === this.name) mine = { id, x: e.q[0] * p, y: e.q[1] * p };
    }
    if (mine !== undefined) {
      for (const [id, e] of game.replica.entities) this.checkInView("held", id, e.q[0] * p, e.q[1] * p, e.components, mine);
    }
  }

  private checkInView(
    what: string,
    id: number,
    x: number,
    y: number,
    components: ReadonlyMap<number, Uint8Array>,
    me: Unit,
  ): void {
    const d = Math.hypot(x - me.x, y - me.y);
    this.maxDistance = Math.max(this.maxDistance, d);
    const kind = component(components, C_KIND);
    if (d > RADIUS + HYSTERESIS + SLACK && this.violations.length < 10) {
      this.violations.push(`${what} ${kind} ${id} at ${d.toFixed(1)} from ${this.name}'s unit`);
    }
    if (kind === "stealth" && !this.scout && d > NEAR + SLACK && this.violations.length < 10) {
      this.violations.push(`${what} stealthed ${id} at ${d.toFixed(1)} from ${this.name} (no scout)`);
    }
  }
}

const players: Player[] = [];

async function join(name: string): Promise<Player> {
  const body = { shard: "zone-1", kind: "zone", subscriber: name };
  const joined = await server.join(body);
  expect(joined).toMatchObject({ shardId: "zone-1", subscriberId: name });
  let first: string | undefined = joined.ticket;
  const game = connectShardGame<Input>(joined.shardId, {
    subscriberId: joined.subscriberId,
    url: server.url,
    ticket: async () => {
      const t = first ?? (await server.join(body)).ticket;
      first = undefined;
      return t;
    },
    onError: (e) => player.violations.push(`decode error: ${e.message}`),
  });
  const player = new Player(name, game);
  players.push(player);
  game.send({ join: {} }); // queued until WELCOME
  return player;
}

/** Renders frames for all players (every ~16 ms, as a page would) for `ms`, or until `until()` holds. */
async function run(ms: number, until?: () => boolean): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const now = performance.now();
    for (const p of players) p.step(now);
    if (until?.()) return;
    await new Promise((r) => setTimeout(r, 16));
  }
}

beforeAll(async () => {
  const [zone] = scratchApps("zone");
  server = await TesseraServer.start({ appDir: zone }); // builds zone.wasm first
});

afterAll(async () => {
  for (const p of players) p.game.close();
  await server?.stop();
  server?.removeApp();
});

describe("the zone through connectShardGame", () => {
  let alice: Player;
  let scout: Player;

  it("each player holds its own unit and only what is within the interest radius", async () => {
    [alice, scout] = await Promise.all([join("alice"), join("scout-1")]);
    const [wa] = await Promise.all([alice.game.connection.ready, scout.game.connection.ready]);
    expect(wa).toMatchObject({ shardId: "zone-1", subscriberId: "alice", codec: "msgpack", tickRate: 20 });

    await run(2000);
    for (const p of [alice, scout]) {
      const game = p.game;
      expect(game.framesReceived, p.name).toBeGreaterThan(20);
      expect(p.me, `${p.name} sees its own unit`).toBeDefined();
      const mine = game.entities.get(p.me!.id)!;
      expect(component(mine.components, C_NAME)).toBe(p.name);
      expect(component(mine.components, C_KIND)).toBe("player");
      expect(component(mine.components, C_HP)).toBe(100);
      // Around the centre of a 2000 x 2000 world with 400 NPCs, about 28 are
      // within 300 units: some, and far fewer than all.
      expect(game.entities.size, p.name).toBeGreaterThan(3);
      expect(p.maxHeld, p.name).toBeLessThan(NPCS / 4);
      expect(p.entered.length, p.name).toBeGreaterThanOrEqual(game.entities.size);
      expect(p.violations, p.name).toEqual([]);
      expect(p.maxDistance, p.name).toBeGreaterThan(50);
      // Every drawn entity is in the replica; NPC kinds are known.
      for (const e of game.entities.values()) {
        expect(["npc", "stealth", "player"]).toContain(component(e.components, C_KIND));
      }
      // The snapshot (rarely sent with replication) names both players.
      expect(game.snapshot).toMatchObject({ width: 2000, height: 2000, npcs: NPCS });
      expect((game.snapshot as { players: string[] }).players.sort()).toEqual(["alice", "scout-1"]);
    }
  });

  it("walking 500 units away: some units leave, others enter, and the unit arrives", async () => {
    const start = { ...alice.me! };
    const before = new Set(alice.game.entities.keys());
    const target = { x: start.x + (start.x < 1000 ? 500 : -500), y: start.y };
    const enteredBefore = alice.entered.length;
    const leftBefore = alice.left.length;
    alice.game.send({ move_to: target });

    // 500 units at 150 per second: about 3.4 s with the interpolation delay.
    const distances: number[] = [];
    await run(8000, () => {
      const me = alice.me;
      if (me === undefined) return false;
      distances.push(Math.hypot(me.x - target.x, me.y - target.y));
      return distances.at(-1)! < 0.5;
    });
    expect(distances.at(-1)).toBeLessThan(0.5);
    // The interpolated position approaches the target steadily, with
    // positions in between (a glide, not a jump).
    for (let i = 1; i < distances.length; i++) expect(distances[i]).toBeLessThanOrEqual(distances[i - 1]! + 0.01);
    expect(distances.filter((d) => d > 50 && d < 450).length).toBeGreaterThan(30);

    const left = new Set(alice.left.slice(leftBefore));
    const entered = new Set(alice.entered.slice(enteredBefore));
    expect(left.size).toBeGreaterThan(0);
    // Units from around the start left (and units that entered on the way may have left again).
    expect([...left].filter((id) => before.has(id)).length).toBeGreaterThan(0);
    const newcomers = [...entered].filter((id) => !before.has(id));
    expect(newcomers.length).toBeGreaterThan(0);
    // Most of what was around the start is out of view now.
    const stayed = [...before].filter((id) => alice.game.entities.has(id));
    expect(stayed.length).toBeLessThan(before.size / 2 + 1);
    for (const p of [alice, scout]) expect(p.violations, p.name).toEqual([]);
    expect(alice.maxHeld).toBeLessThan(NPCS / 4);
  });

  it("measures the round trip and estimates the shard's tick", async () => {
    const rtt = alice.game.rttMs;
    expect(rtt).toBeDefined();
    expect(Number.isFinite(rtt)).toBe(true);
    expect(rtt!).toBeGreaterThan(0); // how short is bench/ material
    await run(200);
    for (const p of [alice, scout]) {
      // The estimate runs with the shard's clock: never behind the newest
      // FRAME by more than a tick or so. (Ahead by how much depends on how
      // late this busy test process reads its frames: the fake-clock tests
      // in test/game/clock.test.ts check the accuracy.)
      const estimate = p.game.clock.tickAt(performance.now())!;
      expect(Number.isFinite(estimate), p.name).toBe(true);
      expect(estimate, p.name).toBeGreaterThanOrEqual(p.game.tick! - 3);
      expect(p.game.clock.tickMs).toBeGreaterThan(40);
      expect(p.game.clock.tickMs).toBeLessThan(60);
      // Drawn 100 ms (2 ticks) behind the estimate.
      expect(p.game.viewTick!).toBeLessThanOrEqual(p.game.tick!);
      expect(p.game.viewTick!).toBeGreaterThanOrEqual(p.game.tick! - 5);
    }
  });
});
