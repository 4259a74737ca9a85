/**
 * `connectShardGame`: a {@link ShardGame} on top of a {@link connectShard}
 * connection, for shards with replication.
 *
 * @module
 */
import { connectShard, type ConnectShardOptions, type ShardConnection } from "../client.js";
import { MessageType } from "../protocol.js";
import { ShardGame, type GameTimingOptions } from "./shard-game.js";

/** Options of {@link connectShardGame}: the connection's options plus the game's timing. */
export interface ConnectShardGameOptions extends ConnectShardOptions, GameTimingOptions {
  /** The subscriber the ticket is for. */
  subscriberId: string;
}

/**
 * A {@link ShardGame} connected to a shard. `connection` is the current
 * underlying connection (a new object after the game replaced it because of
 * a malformed `entities` payload).
 *
 * @typeParam Input the shard's input type
 */
export class ConnectedShardGame<Input = unknown> extends ShardGame<Input> {
  private conn!: ShardConnection<unknown, Input>;
  private unsubscribe: (() => void)[] = [];
  private closed = false;

  /**
   * Use {@link connectShardGame}.
   *
   * @param shardId the shard to join
   * @param options connection and timing options
   */
  constructor(
    readonly shardId: string,
    private readonly options: ConnectShardGameOptions,
  ) {
    super(undefined, options);
    this.attach({
      sendInput: (input, viewTick) => this.conn.send(input, viewTick === null ? undefined : { viewTick }),
      reconnect: () => this.replaceConnection(),
      close: () => {
        this.closed = true;
        this.conn.close();
      },
    });
    this.openConnection();
  }

  /** The current connection (state, errors, events, PING round trip). */
  get connection(): ShardConnection<unknown, Input> {
    return this.conn;
  }

  private openConnection(): void {
    const conn = connectShard<unknown, Input>(this.shardId, this.options);
    this.conn = conn;
    this.unsubscribe = [
      conn.on("open", (welcome) => this.receive(welcome)),
      conn.on("frame", (frame) => this.receive(frame)),
      conn.on("ack", (seq) => this.receive({ type: MessageType.Ack, seq })),
      conn.on("reject", (r) => this.receive({ type: MessageType.Reject, seq: r.seq, error: r.error })),
      conn.on("close", (info) => {
        if (info.reconnecting) this.connectionReset();
      }),
    ];
  }

  /** After a malformed `entities` payload: drop the connection and open a new one (it starts with a BASELINE). */
  private replaceConnection(): void {
    if (this.closed) return;
    for (const off of this.unsubscribe) off();
    this.conn.close();
    this.openConnection();
  }
}

/**
 * Connects to a shard with replication and returns the game view of it.
 *
 * ```ts
 * const game = connectShardGame<Input>("zone-1", { subscriberId, ticket, tickRate: 20 });
 * function draw(now: number) {
 *   game.frame(now);
 *   for (const id of game.left) removeSprite(id);
 *   for (const id of game.entered) addSprite(id);
 *   for (const e of game.entities.values()) moveSprite(e.id, e.x, e.y, e.components.get(HP));
 *   requestAnimationFrame(draw);
 * }
 * requestAnimationFrame(draw);
 * game.send({ move_to: { x: 120, y: 80 } }); // stamped with the tick drawn
 * ```
 *
 * @typeParam Input the shard's input type
 * @param shardId the shard to join (the ticket must be for it)
 * @param options ticket, subscriber, server URL, `tickRate`, `interpolationDelayMs` (default 100), and any {@link ConnectShardOptions}
 */
export function connectShardGame<Input = unknown>(
  shardId: string,
  options: ConnectShardGameOptions,
): ConnectedShardGame<Input> {
  return new ConnectedShardGame<Input>(shardId, options);
}
