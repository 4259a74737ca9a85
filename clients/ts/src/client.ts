/**
 * `connectShard`: one player's session with one tessera shard over a binary
 * WebSocket (`docs/protocol.md`). It sends HELLO with a ticket (asking for
 * frame acks), decodes every FRAME's snapshot, numbers and encodes inputs,
 * reports each input's ACK (a message or a FRAME) or REJECT, answers PINGs,
 * measures the round trip, and reconnects with exponential backoff when the
 * connection drops, except after close codes that say not to. When the
 * player moves to another shard (TRANSFER) it follows at once: the same
 * object connects to the new shard with the ticket TRANSFER carries.
 *
 * @packageDocumentation
 */
import {
  checkViewTick,
  type Codec,
  decodePayload,
  decodeServerMessage,
  encodeClientMessage,
  encodePayload,
  type FrameMessage,
  HelloFlags,
  MAX_CLIENT_MESSAGE_BYTES,
  MessageType,
  PROTOCOL_VERSION,
  ProtocolError,
  SUBPROTOCOL,
  type WelcomeMessage,
} from "./protocol.js";
import { CLIENT_BUG_CODES, describeClose, ShardClosedError, TICKET_CODES } from "./close-codes.js";
import { PendingAcks } from "./acks.js";
import { type FetchLike, type InvokeResult, invokeCompute, type Notification, toNotification } from "./compute.js";

export { CloseCodeName, ShardClosedError } from "./close-codes.js";

// ---------------------------------------------------------------------------
// WebSocket abstraction (browser WebSocket and the `ws` package both fit)

/** The part of a WebSocket that the client uses; the browser's and `ws`'s both fit. */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  readonly protocol?: string;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
}

/** A WebSocket constructor: `new (url, protocols)`. */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

let defaultWebSocket: WebSocketConstructor | undefined;

/**
 * Sets the WebSocket implementation used when {@link ConnectShardOptions.WebSocket}
 * is not given. The Node entry of this package sets it to `ws`; browsers use
 * the global `WebSocket`.
 */
export function setDefaultWebSocket(ctor: WebSocketConstructor | undefined): void {
  defaultWebSocket = ctor;
}

/**
 * The WebSocket implementation a connection uses: `option` if given, else
 * the one {@link setDefaultWebSocket} set (`ws` in Node), else the global
 * `WebSocket`.
 * @throws Error when there is none
 */
export function resolveWebSocket(option: WebSocketConstructor | undefined): WebSocketConstructor {
  const ctor =
    option ?? defaultWebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!ctor) {
    throw new Error(
      "tessera: no WebSocket implementation; import @tessera/client from Node (it uses `ws`) or pass options.WebSocket",
    );
  }
  return ctor;
}

// ---------------------------------------------------------------------------
// Options, events and the connection interface

/** The lifecycle of a {@link ShardConnection}. */
export type ShardState = "connecting" | "open" | "closed";

/** An input the shard refused: its sequence number and the shard's text. */
export interface Rejection {
  /** The number {@link ShardConnection.send} returned for the input. */
  seq: number;
  /** The shard's explanation, e.g. `"outside the arena"`. */
  error: string;
}

/**
 * A ticket, or a function returning one (called again before every
 * (re)connect that has no ticket from a TRANSFER, with the shard the
 * connection is for then: after a move, the new shard).
 */
export type TicketSource = string | ((shardId: string) => string | Promise<string>);

/** A move of the player to another shard, followed by the connection. */
export interface ShardTransfer {
  /** The shard the player left. */
  from: string;
  /** The shard the connection now goes to (its new {@link ShardConnection.shardId}). */
  to: string;
}

/** Reconnect timing: exponential backoff with jitter. */
export interface ReconnectOptions {
  /** Delay before the first retry, in ms (default 250). */
  initialDelayMs?: number;
  /** Largest delay, in ms (default 5000). */
  maxDelayMs?: number;
  /** Growth factor per failed attempt (default 2). */
  factor?: number;
  /** Fraction of each delay that is random, 0..1 (default 0.5). */
  jitter?: number;
  /** Give up after this many failed attempts in a row (default: never). */
  maxAttempts?: number;
}

/** Options of {@link connectShard}. */
export interface ConnectShardOptions {
  /**
   * The ticket for this shard and subscriber (from your backend, the app's
   * join function, or `POST /api/dev/join` in development). A function is
   * called for the first connect and again before every reconnect (after a
   * move, once the TRANSFER's ticket is refused), so it can fetch a fresh
   * ticket, e.g. from a join function:
   * `ticket: async () => (await callFunction<Join>(url, "joinArena", {}, { token })).ticket`.
   */
  ticket: TicketSource;
  /** The subscriber the ticket is for (informational; WELCOME confirms it). */
  subscriberId?: string;
  /**
   * The server's base URL, `http(s)://host:port` (or `ws(s)://`). Default in
   * a browser: the page's origin. Required in Node.
   */
  url?: string;
  /** Reconnect timing, or `false` to never reconnect (default: on). */
  reconnect?: ReconnectOptions | boolean;
  /** How often to PING for {@link ShardConnection.rttMs}, in ms (default 2000; 0: never). */
  pingIntervalMs?: number;
  /**
   * Close and reconnect when nothing arrives for this long, in ms (default
   * 15000; 0: never). The server sends a FRAME every tick and a PING every 5 s.
   */
  idleTimeoutMs?: number;
  /** Inputs sent before the connection opens wait in a queue of this size (default 64; oldest dropped). */
  maxQueuedInputs?: number;
  /** The WebSocket implementation (default: the global one, or `ws` in Node). */
  WebSocket?: WebSocketConstructor;
  /** Random numbers in [0, 1) for the backoff jitter (default `Math.random`; for tests). */
  random?: () => number;
  /**
   * Called when the server moved the player to another shard (TRANSFER),
   * right after the `transfer` event and before the connection to the new
   * shard opens.
   */
  onTransfer?: (transfer: ShardTransfer) => void;
  /** The `fetch` {@link ShardConnection.invoke} uses (default: the global one). */
  fetch?: FetchLike;
}

/** What the connection reports; see {@link ShardConnection.on}. */
export interface ShardEvents<S> {
  /** A new snapshot (decoded in the shard's codec) and the FRAME that carried it. */
  snapshot: (snapshot: S, frame: FrameMessage) => void;
  /** Every FRAME as it arrived (snapshot still encoded; `entities` for replicated shards). */
  frame: (frame: FrameMessage) => void;
  /** The server accepted the ticket: the connection is open. */
  open: (welcome: WelcomeMessage) => void;
  /**
   * Input `seq` was applied and accepted: an ACK message, or a FRAME whose
   * `last_seq` reaches it (emitted just before that FRAME's events; the
   * first such inputs of a socket wait for the next FRAME, until the server
   * has shown it honours frame acks). Once per input, never for a refused one.
   */
  ack: (seq: number) => void;
  /** The shard refused an input (once per input). */
  reject: (rejection: Rejection) => void;
  /** {@link ShardConnection.state} changed. */
  state: (state: ShardState) => void;
  /** A WebSocket closed; `reconnecting` says whether another attempt follows. */
  close: (info: { code: number; reason: string; reconnecting: boolean }) => void;
  /** A problem: a refused ticket, a malformed server message, a failing ticket function. */
  error: (error: Error) => void;
  /** A round trip was measured (ms). */
  rtt: (rttMs: number) => void;
  /**
   * The server moved the player to another shard (TRANSFER): the
   * connection left `from` and is connecting to `to` ({@link
   * ShardConnection.shardId} is `to` already). No `close` event is emitted
   * for the socket to `from`; `state` goes to `connecting`, then `open`
   * with the new shard's WELCOME.
   */
  transfer: (transfer: ShardTransfer) => void;
  /** A compute module's notification (NOTIFY); see {@link ShardConnection.onNotify}. */
  notify: (notification: Notification) => void;
}

/** A live session with one shard; created by {@link connectShard}. */
export interface ShardConnection<S = unknown, I = unknown> {
  /**
   * The shard this connection is for: the one it was made for, then the
   * target of each TRANSFER it followed.
   */
  readonly shardId: string;
  /** How many TRANSFERs this connection followed (0 until the player moves). */
  readonly transfers: number;
  /** The subscriber id (from WELCOME once open, else the option). */
  readonly subscriberId: string | undefined;
  /** `connecting` (also while waiting to reconnect), `open` (after WELCOME) or `closed` (for good). */
  readonly state: ShardState;
  /** The latest snapshot, or `undefined` before the first one. */
  readonly snapshot: S | undefined;
  /** The tick of the latest FRAME (0 before any). */
  readonly tick: number;
  /** The WELCOME of the current (or last) connection. */
  readonly welcome: WelcomeMessage | undefined;
  /** The latest refused input, or `undefined`. */
  readonly lastRejection: Rejection | undefined;
  /** Smoothed PING round trip in ms, or `undefined` before the first PONG. */
  readonly rttMs: number | undefined;
  /** Why the connection closed for good (`state` is `closed`), if not by {@link close}. */
  readonly error: Error | undefined;
  /** Resolves with the first WELCOME; rejects if the connection closes for good before. */
  readonly ready: Promise<WelcomeMessage>;
  /**
   * Sends an input, encoded in the shard's codec. Before the connection is
   * open the input waits in a queue and goes out right after WELCOME.
   * @param input the input value, e.g. `{ move_to: { x: 120, y: 80 } }`
   * @param options.viewTick the tick being drawn when the input was made,
   *   for lag compensation: a non-negative finite number, fractional when
   *   the frame drawn fell between two ticks (`connectShardGame` stamps it)
   * @returns the input's sequence number (increasing for the whole life of
   *   this object, across reconnects), to match ACKs and {@link Rejection}s.
   * @throws Error once the connection is closed; RangeError for an input over 64 KiB;
   *   {@link ProtocolError} for a view tick that is negative, not finite or over 2^53 - 1
   *   (before the input is numbered or queued).
   */
  send(input: I, options?: { viewTick?: number }): number;
  /** Subscribes to an event; returns a function that unsubscribes. */
  on<E extends keyof ShardEvents<S>>(event: E, listener: ShardEvents<S>[E]): () => void;
  /** Unsubscribes a listener added with {@link on}. */
  off<E extends keyof ShardEvents<S>>(event: E, listener: ShardEvents<S>[E]): void;
  /**
   * Drops the current socket and connects again at once, to the current
   * shard (for a caller that found data it cannot use, such as a malformed
   * `entities` payload). Emits no `close` event; inputs sent on the dropped
   * socket get no answer. Does nothing once closed.
   */
  reconnect(): void;
  /** Closes the connection for good (no reconnect). Idempotent. */
  close(): void;
  /**
   * Calls `handler` with every compute module notification (NOTIFY) that
   * reaches this player: `{module, channel, payload, json?, flowId}`, in
   * order with the frames. Returns a function that unsubscribes.
   */
  onNotify(handler: (notification: Notification) => void): () => void;
  /**
   * Calls export `exportName` of compute module `module` over HTTP (`POST
   * /api/compute/modules/<module>/invoke/<export>` on this connection's
   * server) as this player: the bearer token is the connection's current
   * ticket (the last one sent in HELLO, or one from the ticket source), or
   * `options.token` (a management token, say).
   * @throws {@link ComputeInvokeError} with the server's `code` and `message`
   */
  invoke<R = unknown>(
    module: string,
    exportName: string,
    params?: unknown,
    options?: { token?: string; signal?: AbortSignal },
  ): Promise<InvokeResult<R>>;
}

// ---------------------------------------------------------------------------
// URL helpers

/** The WebSocket URL of a shard: `ws(s)://host:port/shard/<id>` from an http(s) or ws(s) base. */
export function shardUrl(base: string, shardId: string): string {
  let u: URL;
  try {
    u = new URL(base);
  } catch {
    throw new Error(`tessera: url must be absolute, like http://127.0.0.1:4321 (got "${base}")`);
  }
  if (u.protocol === "http:") u.protocol = "ws:";
  else if (u.protocol === "https:") u.protocol = "wss:";
  else if (u.protocol !== "ws:" && u.protocol !== "wss:") {
    throw new Error(`tessera: url must be http(s):// or ws(s):// (got "${base}")`);
  }
  const prefix = u.pathname.replace(/\/+$/, "");
  return `${u.protocol}//${u.host}${prefix}/shard/${encodeURIComponent(shardId)}`;
}

function defaultBaseUrl(): string {
  const loc = (globalThis as { location?: { origin?: string } }).location;
  if (loc?.origin && loc.origin !== "null") return loc.origin;
  throw new Error("tessera: options.url is required outside a browser (e.g. http://127.0.0.1:4321)");
}

// ---------------------------------------------------------------------------
// The implementation

type Listener = (...args: never[]) => void;

const OPEN = 1;

/**
 * TRANSFERs in a row without a WELCOME after which the connection gives up
 * (shards that keep sending the player on without ever taking it).
 */
const MAX_TRANSFERS_WITHOUT_WELCOME = 8;

class Connection<S, I> implements ShardConnection<S, I> {
  readonly ready: Promise<WelcomeMessage>;

  private _shardId: string;
  private readonly baseUrl: string;
  private url: string;
  private readonly ticketSource: TicketSource;
  private readonly onTransfer: ((transfer: ShardTransfer) => void) | undefined;
  private transferTicket: string | undefined; // from the latest TRANSFER, until refused
  private lastTicket: string | undefined; // the ticket of the latest HELLO
  private readonly fetchImpl: FetchLike | undefined;
  private _transfers = 0;
  private transfersWithoutWelcome = 0;
  private readonly optionSubscriber: string | undefined;
  private readonly WS: WebSocketConstructor;
  private readonly reconnectOpts: Required<ReconnectOptions> | null;
  private readonly pingIntervalMs: number;
  private readonly idleTimeoutMs: number;
  private readonly maxQueued: number;
  private readonly random: () => number;
  private readonly listeners = new Map<string, Set<Listener>>();

  private _state: ShardState = "connecting";
  private _snapshot: S | undefined;
  private _tick = 0;
  private _welcome: WelcomeMessage | undefined;
  private _lastRejection: Rejection | undefined;
  private _rtt: number | undefined;
  private _error: Error | undefined;

  private ws: WebSocketLike | null = null;
  private generation = 0; // bumps per socket; stale callbacks compare it
  private open = false; // WELCOME received on the current socket
  private nextSeq = 1;
  private queue: { seq: number; input: I; viewTick: number | null }[] = [];
  private readonly unanswered = new PendingAcks(); // inputs sent on the current socket
  private attempts = 0; // failed attempts in a row
  private ticketRefusals = 0; // ticket refusals in a row
  private notFound = 0; // shard_not_found in a row
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private nextNonce = 1;
  private pings = new Map<number, number>(); // nonce -> sent at (ms)
  private resolveReady!: (w: WelcomeMessage) => void;
  private rejectReady!: (e: Error) => void;

  constructor(shardId: string, options: ConnectShardOptions) {
    if (typeof shardId !== "string" || shardId === "") throw new Error("tessera: shardId must be a non-empty string");
    if (options == null || (typeof options.ticket !== "string" && typeof options.ticket !== "function")) {
      throw new Error("tessera: options.ticket must be a string or a function returning one");
    }
    this._shardId = shardId;
    this.baseUrl = options.url ?? defaultBaseUrl();
    this.url = shardUrl(this.baseUrl, shardId);
    this.ticketSource = options.ticket;
    this.onTransfer = options.onTransfer;
    this.fetchImpl = options.fetch;
    this.optionSubscriber = options.subscriberId;
    this.WS = resolveWebSocket(options.WebSocket);
    const r = options.reconnect ?? true;
    this.reconnectOpts =
      r === false
        ? null
        : {
            initialDelayMs: 250,
            maxDelayMs: 5000,
            factor: 2,
            jitter: 0.5,
            maxAttempts: Infinity,
            ...(r === true ? {} : r),
          };
    this.pingIntervalMs = options.pingIntervalMs ?? 2000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 15000;
    this.maxQueued = options.maxQueuedInputs ?? 64;
    this.random = options.random ?? Math.random;
    this.ready = new Promise<WelcomeMessage>((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {}); // the error also goes to `error` listeners
    void this.connect();
  }

  get shardId(): string {
    return this._shardId;
  }
  get transfers(): number {
    return this._transfers;
  }
  get state(): ShardState {
    return this._state;
  }
  get snapshot(): S | undefined {
    return this._snapshot;
  }
  get tick(): number {
    return this._tick;
  }
  get welcome(): WelcomeMessage | undefined {
    return this._welcome;
  }
  get lastRejection(): Rejection | undefined {
    return this._lastRejection;
  }
  get rttMs(): number | undefined {
    return this._rtt;
  }
  get error(): Error | undefined {
    return this._error;
  }
  get subscriberId(): string | undefined {
    return this._welcome?.subscriberId ?? this.optionSubscriber;
  }

  on<E extends keyof ShardEvents<S>>(event: E, listener: ShardEvents<S>[E]): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as Listener);
    return () => this.off(event, listener);
  }

  off<E extends keyof ShardEvents<S>>(event: E, listener: ShardEvents<S>[E]): void {
    this.listeners.get(event)?.delete(listener as Listener);
  }

  private emit<E extends keyof ShardEvents<S>>(event: E, ...args: Parameters<ShardEvents<S>[E]>): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const fn of [...set]) {
      try {
        (fn as (...a: unknown[]) => void)(...args);
      } catch (e) {
        // A throwing listener must not break the connection.
        setTimeout(() => {
          throw e;
        });
      }
    }
  }

  private setState(state: ShardState): void {
    if (this._state === state) return;
    this._state = state;
    this.emit("state", state);
  }

  send(input: I, options?: { viewTick?: number }): number {
    if (this._state === "closed") {
      throw new Error(`tessera: send on a closed connection to shard "${this.shardId}"`, { cause: this._error });
    }
    const viewTick = options?.viewTick == null ? null : checkViewTick(options.viewTick);
    const seq = this.nextSeq++;
    if (this.open && this.ws) {
      this.sendInput(seq, input, viewTick);
    } else {
      this.queue.push({ seq, input, viewTick });
      if (this.queue.length > this.maxQueued) this.queue.shift();
    }
    return seq;
  }

  private sendInput(seq: number, input: I, viewTick: number | null): void {
    const codec: Codec = this._welcome?.codec ?? "msgpack";
    const payload = encodePayload(codec, input);
    const bytes = encodeClientMessage({ type: MessageType.Input, seq, payload, viewTick });
    if (bytes.length > MAX_CLIENT_MESSAGE_BYTES) {
      throw new RangeError(`tessera: input ${seq} is ${bytes.length} bytes; the limit is ${MAX_CLIENT_MESSAGE_BYTES}`);
    }
    this.ws!.send(bytes);
    this.unanswered.sent(seq);
  }

  close(): void {
    if (this._state === "closed") return;
    this.finish(undefined);
  }

  onNotify(handler: (notification: Notification) => void): () => void {
    return this.on("notify", handler);
  }

  async invoke<R = unknown>(
    module: string,
    exportName: string,
    params?: unknown,
    options?: { token?: string; signal?: AbortSignal },
  ): Promise<InvokeResult<R>> {
    let token = options?.token ?? this.lastTicket;
    if (token === undefined) {
      token = typeof this.ticketSource === "string" ? this.ticketSource : await this.ticketSource(this._shardId);
    }
    return invokeCompute<R>(module, exportName, params ?? {}, {
      url: this.baseUrl,
      token,
      ...(this.fetchImpl ? { fetch: this.fetchImpl } : {}),
      ...(options?.signal ? { signal: options.signal } : {}),
    });
  }

  reconnect(): void {
    if (this._state === "closed") return;
    const ws = this.ws;
    this.dropSocket();
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    if (ws) {
      try {
        ws.close(1000, "reconnecting");
      } catch {
        /* ignore */
      }
    }
    void this.connect();
  }

  // -- connecting ------------------------------------------------------------

  private async connect(): Promise<void> {
    const gen = ++this.generation;
    this.setState("connecting");
    let ticket: string;
    try {
      if (this.transferTicket !== undefined) ticket = this.transferTicket;
      else ticket = typeof this.ticketSource === "string" ? this.ticketSource : await this.ticketSource(this._shardId);
      if (typeof ticket !== "string" || ticket === "") throw new Error("the ticket function returned no ticket");
      this.lastTicket = ticket;
    } catch (e) {
      if (gen !== this.generation || this._state === "closed") return;
      const err = new Error(`tessera: getting a ticket for shard "${this.shardId}" failed: ${(e as Error)?.message ?? e}`, {
        cause: e,
      });
      this.emit("error", err);
      this.scheduleReconnect(err);
      return;
    }
    if (gen !== this.generation || this._state === "closed") return;
    let ws: WebSocketLike;
    try {
      ws = new this.WS(this.url, SUBPROTOCOL);
    } catch (e) {
      const err = new Error(`tessera: cannot open ${this.url}: ${(e as Error).message}`, { cause: e });
      this.emit("error", err);
      this.scheduleReconnect(err);
      return;
    }
    this.ws = ws;
    this.open = false;
    ws.binaryType = "arraybuffer";
    ws.onopen = () => {
      if (gen !== this.generation) return;
      this.armIdle();
      ws.send(
        encodeClientMessage({ type: MessageType.Hello, version: PROTOCOL_VERSION, ticket, flags: HelloFlags.FrameAcks }),
      );
    };
    ws.onmessage = (ev) => {
      if (gen !== this.generation) return;
      this.onMessage(ws, ev.data);
    };
    ws.onerror = () => {
      // A close event follows; it carries the code.
    };
    ws.onclose = (ev) => {
      if (gen !== this.generation) return;
      this.onClose(ev.code, ev.reason ?? "");
    };
  }

  private onMessage(ws: WebSocketLike, data: unknown): void {
    this.armIdle();
    if (typeof data === "string") {
      this.protocolError(ws, new ProtocolError("the server sent a text message"));
      return;
    }
    let msg;
    try {
      msg = decodeServerMessage(toBytes(data));
    } catch (e) {
      this.protocolError(ws, e as Error);
      return;
    }
    switch (msg.type) {
      case MessageType.Welcome:
        if (this.open) return;
        this.open = true;
        this.transfersWithoutWelcome = 0;
        this._welcome = msg;
        this.unanswered.welcome(((msg.flags ?? 0) & HelloFlags.FrameAcks) !== 0);
        this.attempts = 0;
        this.ticketRefusals = 0;
        this.notFound = 0;
        this.setState("open");
        this.emit("open", msg);
        this.resolveReady(msg);
        this.startPings(ws);
        this.flushQueue();
        return;
      case MessageType.Frame: {
        if (!this.open) return;
        // "ack" for the inputs this FRAME acknowledges comes before
        // "frame"/"snapshot": a listener that drops acked inputs and replays
        // the rest on each snapshot then never replays one the snapshot
        // includes. ShardGame is indifferent (same round-trip sample at the
        // same arrival time; it reconciles with last_seq), but its "frame"
        // handler may replace this connection, after which acks would be lost.
        for (const seq of this.unanswered.frame(msg.lastSeq)) this.emit("ack", seq);
        if (this.ws !== ws) return; // an "ack" listener closed the connection
        this._tick = msg.tick;
        this.emit("frame", msg);
        if (msg.snapshot !== null) {
          let snap: S;
          try {
            snap = decodePayload<S>(this._welcome!.codec, msg.snapshot);
          } catch (e) {
            this.protocolError(ws, e as Error);
            return;
          }
          this._snapshot = snap;
          this.emit("snapshot", snap, msg);
        }
        return;
      }
      case MessageType.Transfer:
        this.followTransfer(ws, msg.shardId, msg.ticket);
        return;
      case MessageType.Notify:
        if (!this.open) return;
        this.emit("notify", toNotification(msg));
        return;
      case MessageType.Ack:
        if (this.unanswered.answer(msg.seq)) this.emit("ack", msg.seq);
        return;
      case MessageType.Reject: {
        if (!this.unanswered.answer(msg.seq)) return;
        const rejection = { seq: msg.seq, error: msg.error };
        this._lastRejection = rejection;
        this.emit("reject", rejection);
        return;
      }
      case MessageType.Ping:
        if (ws.readyState === OPEN) ws.send(encodeClientMessage({ type: MessageType.Pong, nonce: msg.nonce }));
        return;
      case MessageType.Pong: {
        const sentAt = this.pings.get(msg.nonce);
        if (sentAt === undefined) return;
        for (const n of this.pings.keys()) if (n <= msg.nonce) this.pings.delete(n);
        const sample = Date.now() - sentAt;
        this._rtt = this._rtt === undefined ? sample : this._rtt * 0.75 + sample * 0.25;
        this.emit("rtt", this._rtt);
        return;
      }
    }
  }

  /**
   * TRANSFER: the player is on shard `to` now. Leaves this socket (the
   * server closes it with 4011 right after; that close is not waited for)
   * and connects to `to` at once with `ticket`. Also when TRANSFER came
   * instead of WELCOME (a reconnect to a shard the player had left).
   */
  private followTransfer(ws: WebSocketLike, to: string, ticket: string): void {
    let url: string;
    try {
      url = shardUrl(this.baseUrl, to);
    } catch (e) {
      this.protocolError(ws, new ProtocolError(`TRANSFER shard_id cannot be used in a URL: ${(e as Error).message}`));
      return;
    }
    const from = this._shardId;
    this.transfersWithoutWelcome++;
    this.dropSocket();
    try {
      ws.close(1000, "transferred");
    } catch {
      /* already closing */
    }
    this._shardId = to;
    this.url = url;
    this.transferTicket = ticket;
    this._transfers++;
    this.attempts = 0;
    this.ticketRefusals = 0;
    this.notFound = 0;
    if (this.transfersWithoutWelcome > MAX_TRANSFERS_WITHOUT_WELCOME) {
      this.finish(
        new Error(
          `tessera: moved ${this.transfersWithoutWelcome} times in a row without a WELCOME (last from shard "${from}" to "${to}"); giving up`,
        ),
      );
      return;
    }
    const transfer = { from, to };
    this.emit("transfer", transfer);
    if (this.onTransfer) {
      try {
        this.onTransfer(transfer);
      } catch (e) {
        setTimeout(() => {
          throw e;
        });
      }
    }
    if (this._state === "closed") return; // a listener closed it
    void this.connect();
  }

  private protocolError(ws: WebSocketLike, e: Error): void {
    this.emit("error", new ProtocolError(`tessera: bad message from the server: ${e.message}`));
    this.dropSocket();
    try {
      ws.close(4000, "bad message from the server");
    } catch {
      /* already closing */
    }
    this.scheduleReconnect(e);
  }

  private flushQueue(): void {
    const queued = this.queue;
    this.queue = [];
    for (const q of queued) {
      try {
        this.sendInput(q.seq, q.input, q.viewTick);
      } catch (e) {
        this.emit("error", e as Error);
      }
    }
  }

  // -- closing and reconnecting ----------------------------------------------

  private onClose(code: number, reason: string): void {
    const wasOpen = this.open;
    this.dropSocket();
    if (this._state === "closed") return;

    let fatal: Error | undefined;
    const canRefresh = typeof this.ticketSource === "function";
    if (TICKET_CODES.has(code)) {
      this.ticketRefusals++;
      // A refused TRANSFER ticket is not tried again: the ticket function
      // (asked for the current shard) comes next, or, for a fixed ticket
      // string (for the first shard), the end.
      this.transferTicket = undefined;
      if (!canRefresh || this.ticketRefusals >= 2) {
        fatal = new ShardClosedError(this.shardId, code, reason, describeClose(code));
      }
    } else if (code === 4004) {
      this.notFound++;
      if (this.notFound >= 5) fatal = new ShardClosedError(this.shardId, code, reason, describeClose(code));
    } else if (code === 4005 || code === 4006 || CLIENT_BUG_CODES.has(code)) {
      fatal = new ShardClosedError(this.shardId, code, reason, describeClose(code));
    }
    if (fatal) {
      this.emit("close", { code, reason, reconnecting: false });
      this.finish(fatal);
      return;
    }
    const reconnecting = this.reconnectOpts !== null;
    this.emit("close", { code, reason, reconnecting });
    if (!reconnecting) {
      this.finish(
        wasOpen
          ? undefined
          : new ShardClosedError(
              this.shardId,
              code,
              reason,
              code === 1006 ? `could not connect to ${this.url}` : "the connection closed before it opened",
            ),
      );
      return;
    }
    // A fresh ticket after a ticket refusal goes out at once.
    this.scheduleReconnect(new ShardClosedError(this.shardId, code, reason, describeClose(code)), TICKET_CODES.has(code));
  }

  /** The delay before reconnect attempt `attempt` (0-based): exponential, capped, partly random. */
  private backoffDelay(attempt: number): number {
    const o = this.reconnectOpts!;
    const base = Math.min(o.maxDelayMs, o.initialDelayMs * Math.pow(o.factor, attempt));
    const jitter = Math.min(1, Math.max(0, o.jitter));
    return base * (1 - jitter) + base * jitter * this.random();
  }

  private scheduleReconnect(cause: Error, immediate = false): void {
    if (this._state === "closed") return;
    if (!this.reconnectOpts) {
      this.finish(cause);
      return;
    }
    if (this.attempts >= this.reconnectOpts.maxAttempts) {
      this.finish(new Error(`tessera: gave up reconnecting to shard "${this.shardId}" after ${this.attempts} attempts: ${cause.message}`, { cause }));
      return;
    }
    const delay = immediate ? 0 : this.backoffDelay(this.attempts);
    this.attempts++;
    this.setState("connecting");
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect();
    }, delay);
  }

  private startPings(ws: WebSocketLike): void {
    clearInterval(this.pingTimer);
    this.pings.clear();
    if (this.pingIntervalMs <= 0) return;
    const ping = () => {
      if (ws.readyState !== OPEN) return;
      const nonce = this.nextNonce++;
      this.pings.set(nonce, Date.now());
      if (this.pings.size > 16) this.pings.delete(this.pings.keys().next().value as number);
      ws.send(encodeClientMessage({ type: MessageType.Ping, nonce }));
    };
    ping();
    this.pingTimer = setInterval(ping, this.pingIntervalMs);
  }

  private armIdle(): void {
    clearTimeout(this.idleTimer);
    if (this.idleTimeoutMs <= 0) return;
    const gen = this.generation;
    this.idleTimer = setTimeout(() => {
      if (gen !== this.generation || !this.ws) return;
      const ws = this.ws;
      this.dropSocket();
      try {
        ws.close(4008, "no message from the server");
      } catch {
        /* ignore */
      }
      this.emit("close", { code: 1006, reason: "no message from the server", reconnecting: this.reconnectOpts !== null });
      this.scheduleReconnect(new Error("tessera: the server went silent"));
    }, this.idleTimeoutMs);
  }

  /** Forgets the current socket (its late callbacks are ignored) and its timers. */
  private dropSocket(): void {
    this.generation++;
    this.open = false;
    clearInterval(this.pingTimer);
    clearTimeout(this.idleTimer);
    this.pingTimer = undefined;
    this.idleTimer = undefined;
    this.pings.clear();
    this.unanswered.reset(); // inputs sent on a dead socket get no answer
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      ws.onopen = null;
      ws.onmessage = null;
      ws.onclose = null;
      ws.onerror = () => {};
    }
  }

  private finish(error: Error | undefined): void {
    const ws = this.ws;
    this.dropSocket();
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.queue = [];
    if (ws) {
      try {
        ws.close(1000, "client closed");
      } catch {
        /* ignore */
      }
    }
    this._error = error;
    this.setState("closed");
    if (error) {
      this.emit("error", error);
      this.rejectReady(error);
    } else {
      this.rejectReady(new Error(`tessera: connection to shard "${this.shardId}" closed`));
    }
  }
}

function toBytes(data: unknown): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (Array.isArray(data)) {
    // `ws` with binaryType "fragments"/"nodebuffer" is not used, but be lenient.
    return toBytes(concat(data as Uint8Array[]));
  }
  throw new ProtocolError("a message that is not binary");
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/**
 * Connects to a shard and keeps the connection alive.
 *
 * ```ts
 * const shard = connectShard<Snapshot, Input>("arena-1", {
 *   subscriberId, ticket, url: "http://127.0.0.1:4321",
 * });
 * shard.on("snapshot", (s) => draw(s));
 * shard.on("reject", (r) => show(r.error));
 * const seq = shard.send({ move_to: { x: 120, y: 80 } });
 * ```
 *
 * Reconnects with exponential backoff and jitter after a dropped connection,
 * a server restart (1001), 1008, 4004, 4007 and 4008; a ticket function is
 * called again for every attempt. It does not reconnect after 4005 (kicked),
 * 4006 (shard stopped), a refused ticket (4001/4002/4003) when a fresh one is
 * also refused or the ticket is a fixed string, or a client error (1009,
 * 4000, 4009, 4010): `state` becomes `closed`, `error` holds a
 * {@link ShardClosedError} naming the close code and the server's reason,
 * and `error` listeners and {@link ShardConnection.ready} receive it.
 *
 * A TRANSFER (the player moved to another shard) is followed at once: the
 * connection goes to `/shard/<to>` on the same server with the ticket the
 * TRANSFER carries, reports it with the `transfer` event and
 * `options.onTransfer({ from, to })`, and `shardId` and `transfers` change.
 * The 4011 close that follows a TRANSFER is neither an error nor retried.
 * Later reconnects use that ticket until it is refused, then the ticket
 * function (called with the new shard id).
 *
 * @typeParam S the snapshot type (as the shard's codec decodes it)
 * @typeParam I the input type
 * @param shardId the shard to join (the ticket must be for it)
 * @param options the ticket, server URL and tuning; see {@link ConnectShardOptions}
 * @throws Error for a missing ticket, a bad URL, a missing URL outside a
 *   browser, or no WebSocket implementation
 */
export function connectShard<S = unknown, I = unknown>(
  shardId: string,
  options: ConnectShardOptions,
): ShardConnection<S, I> {
  return new Connection<S, I>(shardId, options);
}
