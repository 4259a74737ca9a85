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
 * A {@link ShardGame} connected to a shard. `connection` is the underlying
 * connection (one object for the game's life: after a malformed `entities`
 * payload the game has it reconnect, and it follows TRANSFERs itself).
 *
 * When the server moves the player to another shard, the connection goes
 * there at once and the game starts over with that shard's first FRAME
 * (see {@link ShardGame.shardChanged}): until then it keeps drawing the
 * last picture. {@link shardId} and {@link transfers} change, and
 * `options.onTransfer` is called after the game has reset.
 *
 * @typeParam Input the shard's input type
 */
export class ConnectedShardGame<Input = unknown> extends ShardGame<Input> {
  private readonly conn: ShardConnection<unknown, Input>;

  /**
   * Use {@link connectShardGame}.
   *
   * @param shardId the shard to join
   * @param options connection and timing options
   */
  constructor(shardId: string, options: ConnectShardGameOptions) {
    super(undefined, options);
    const { onTransfer, ...connOptions } = options;
    const conn = connectShard<unknown, Input>(shardId, connOptions);
    this.conn = conn;
    this.attach({
      sendInput: (input, viewTick) => conn.send(input, viewTick === null ? undefined : { viewTick }),
      // After a malformed `entities` payload: a new socket (it starts with a BASELINE).
      reconnect: () => conn.reconnect(),
      close: () => conn.close(),
    });
    conn.on("open", (welcome) => this.receive(welcome));
    conn.on("frame", (frame) => this.receive(frame));
    conn.on("ack", (seq) => this.receive({ type: MessageType.Ack, seq }));
    conn.on("reject", (r) => this.receive({ type: MessageType.Reject, seq: r.seq, error: r.error }));
    conn.on("close", (info) => {
      if (info.reconnecting) this.connectionReset();
    });
    conn.on("transfer", (transfer) => {
      this.shardChanged();
      onTransfer?.(transfer);
    });
  }

  /** The shard the game is on: the one it was made for, then the target of each TRANSFER. */
  get shardId(): string {
    return this.conn.shardId;
  }

  /** How many TRANSFERs the game followed. */
  get transfers(): number {
    return this.conn.transfers;
  }

  /** The connection (state, errors, events, PING round trip). */
  get connection(): ShardConnection<unknown, Input> {
    return this.conn;
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
 * @param options ticket, subscriber, server URL, `tickRate`, `interpolationDelayMs` (default 100), `onTransfer`, and any {@link ConnectShardOptions}
 */
export function connectShardGame<Input = unknown>(
  shardId: string,
  options: ConnectShardGameOptions,
): ConnectedShardGame<Input> {
  return new ConnectedShardGame<Input>(shardId, options);
}
