/**
 * `@tessera/client/react`: the {@link useShard} and {@link useRealm} hooks.
 *
 * @packageDocumentation
 */
import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from "react";
import {
  connectShard,
  type ConnectShardOptions,
  type Rejection,
  type ShardConnection,
  type ShardState,
  type ShardTransfer,
} from "./client.js";
import type { RealmConnection } from "./realm/connect.js";
import type { JsonObject } from "./realm/patch.js";

/** Options of {@link useShard}: the same as {@link connectShard}'s. */
export type UseShardOptions = ConnectShardOptions;

/** What {@link useShard} returns; each render sees the latest values. */
export interface UseShardResult<S, I> {
  /** The latest snapshot, or `undefined` before the first one. */
  snapshot: S | undefined;
  /**
   * Sends an input (see {@link ShardConnection.send}); returns its sequence
   * number. Stable across renders. Throws when there is no connection
   * (no shardId or options yet, or after unmount). `viewTick` may be
   * fractional (the tick drawn, between two received ticks).
   */
  send: (input: I, options?: { viewTick?: number }) => number;
  /** The latest refused input, e.g. `{ seq: 3, error: "outside the arena" }`. */
  lastRejection: Rejection | undefined;
  /** `connecting`, `open` or `closed` (also while shardId or options are missing). */
  state: ShardState;
  /** Why the connection closed for good, if it did (e.g. a refused ticket). */
  error: Error | undefined;
  /** Smoothed round trip in ms, once measured. */
  rttMs: number | undefined;
  /**
   * The shard the connection is for now: `shardId`, then the target of each
   * TRANSFER followed (`undefined` when nothing connects).
   */
  shardId: string | undefined;
  /** TRANSFERs the connection followed (0 until the player moves). */
  transfers: number;
  /** The underlying connection, for events the hook does not expose (`null` when none). */
  connection: ShardConnection<S, I> | null;
}

interface View<S> {
  snapshot: S | undefined;
  lastRejection: Rejection | undefined;
  state: ShardState;
  error: Error | undefined;
  rttMs: number | undefined;
  shardId: string | undefined;
  transfers: number;
}

const idle: View<never> = {
  snapshot: undefined,
  lastRejection: undefined,
  state: "closed",
  error: undefined,
  rttMs: undefined,
  shardId: undefined,
  transfers: 0,
};

/**
 * Connects a component to a shard: re-renders on every snapshot, rejection,
 * state change, RTT sample and transfer, and closes the connection on
 * unmount.
 *
 * ```tsx
 * const { snapshot, send, lastRejection, state } = useShard<Snapshot, Input>(
 *   "arena-1", { subscriberId, ticket });
 * <canvas onClick={(e) => send({ move_to: { x: e.clientX, y: e.clientY } })} />
 * ```
 *
 * The connection is closed and made again when `shardId`, `options.url`,
 * `options.subscriberId`, a string `options.ticket` or `options.WebSocket`
 * change; other options are read when it connects, so an inline options
 * object does not reconnect on every render. A ticket function may be a new
 * closure on each render: the latest one is called at every (re)connect.
 * With `shardId` or `options` null or undefined nothing connects (`state`
 * is `closed`), e.g. while the page is still joining.
 *
 * When the server moves the player to another shard the connection follows
 * it (see {@link connectShard}): the result's `shardId` and `transfers`
 * change and `options.onTransfer` (the latest one) is called. A component
 * that then passes the new shard id as `shardId` keeps that connection (it
 * is already there); any other change of `shardId` connects anew.
 *
 * @typeParam S the snapshot type
 * @typeParam I the input type
 */
export function useShard<S = unknown, I = unknown>(
  shardId: string | null | undefined,
  options: UseShardOptions | null | undefined,
): UseShardResult<S, I> {
  const optionsRef = useRef(options);
  optionsRef.current = options;
  const connRef = useRef<ShardConnection<S, I> | null>(null);
  const madeForRef = useRef<string | null>(null); // the shardId the live connection was made for
  const [view, setView] = useState<View<S>>(idle);
  const [connection, setConnection] = useState<ShardConnection<S, I> | null>(null);

  const ticket = options?.ticket;
  const ticketKey = typeof ticket === "string" ? ticket : ticket ? "\u0000function" : undefined;
  const active = !!shardId && !!options && ticketKey !== undefined;
  // A shardId that names where the live connection has moved to keeps it.
  const live = connRef.current;
  const connectTo = live && live.state !== "closed" && shardId === live.shardId ? madeForRef.current! : shardId;

  useEffect(() => {
    if (!active) {
      setView(idle);
      return;
    }
    const opts = optionsRef.current!;
    const conn = connectShard<S, I>(connectTo!, {
      ...opts,
      ticket:
        typeof opts.ticket === "string"
          ? opts.ticket
          : (shard: string) => {
              const t = optionsRef.current?.ticket;
              if (typeof t === "function") return t(shard);
              if (typeof t === "string") return t;
              throw new Error("tessera: useShard has no ticket");
            },
      onTransfer: (transfer: ShardTransfer) => optionsRef.current?.onTransfer?.(transfer),
    });
    connRef.current = conn;
    madeForRef.current = connectTo!;
    setConnection(conn);
    const update = () =>
      setView({
        snapshot: conn.snapshot,
        lastRejection: conn.lastRejection,
        state: conn.state,
        error: conn.error,
        rttMs: conn.rttMs,
        shardId: conn.shardId,
        transfers: conn.transfers,
      });
    update();
    const offs = [
      conn.on("snapshot", update),
      conn.on("reject", update),
      conn.on("state", update),
      conn.on("rtt", update),
      conn.on("transfer", update),
    ];
    return () => {
      for (const off of offs) off();
      conn.close();
      if (connRef.current === conn) connRef.current = null;
      setConnection((c) => (c === conn ? null : c));
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- see the doc comment
  }, [active, connectTo, ticketKey, options?.url, options?.subscriberId, options?.WebSocket]);

  const send = useCallback((input: I, sendOptions?: { viewTick?: number }): number => {
    const conn = connRef.current;
    if (!conn) throw new Error("tessera: useShard has no connection (no shardId/options yet, or unmounted)");
    return conn.send(input, sendOptions);
  }, []);

  return { ...view, send, connection };
}

const identity = <T,>(doc: JsonObject): T => doc as T;
const noop = () => {};
const subscribeNone = () => noop;

/**
 * Follows a realm connection's document in a component: returns
 * `selector(connection.document)` and re-renders when the document changes
 * and the selected value is no longer `isEqual` to the last one (default
 * `Object.is`; the document shares unchanged subtrees between versions, so
 * selecting a subtree re-renders only when that subtree changed).
 *
 * ```tsx
 * const realm = useMemo(() => connectRealm(url, "match", matchId, { ticket }), [matchId]);
 * useEffect(() => () => realm.close(), [realm]);
 * const players = useRealm(realm, (doc) => doc.players as Players | undefined);
 * ```
 *
 * The hook neither opens nor closes the connection. With `connection` null
 * or undefined it returns `undefined`. The selector may be a new closure on
 * each render (it is applied again then); it must not change the document.
 *
 * @typeParam T what the selector returns (default: the whole document)
 * @param connection a connection from `connectRealm`, or null/undefined
 * @param selector picks what the component needs from the document
 * @param isEqual says when a newly selected value counts as unchanged
 */
export function useRealm<T = JsonObject>(
  connection: RealmConnection | null | undefined,
  selector: (document: JsonObject) => T = identity,
  isEqual: (a: T, b: T) => boolean = Object.is,
): T | undefined {
  const cache = useRef<{ conn: RealmConnection; doc: JsonObject; selector: unknown; value: T } | null>(null);
  const subscribe = useCallback(
    (onChange: () => void) => (connection ? connection.on("change", onChange) : noop),
    [connection],
  );
  const getSnapshot = (): T | undefined => {
    if (!connection) return undefined;
    const doc = connection.document;
    const c = cache.current;
    if (c && c.conn === connection && c.doc === doc && c.selector === selector) return c.value;
    const next = selector(doc);
    const value = c && c.conn === connection && isEqual(c.value, next) ? c.value : next;
    cache.current = { conn: connection, doc, selector, value };
    return value;
  };
  return useSyncExternalStore(connection ? subscribe : subscribeNone, getSnapshot, getSnapshot);
}
