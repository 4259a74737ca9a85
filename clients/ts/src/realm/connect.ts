/**
 * `connectRealm`: one client's live copy of one realm instance over a
 * binary WebSocket (`docs/protocol.md` "Realms (tessera.realm.v1)"). It
 * sends HELLO with a ticket and the (epoch, version) it holds, takes the
 * HYDRATE (the whole document) or the RESUME and the commits it missed,
 * follows every later COMMIT, and sends the client's writes as WRITEs:
 * applied to the shown document at once, confirmed or rolled back by the
 * server's ACK, COMMIT or REJECT. Writes are split to fit the realm's
 * advertised limits and paced by a token bucket; the connection answers
 * PINGs and reconnects with backoff when it drops.
 *
 * @packageDocumentation
 */
import { type ReconnectOptions, resolveWebSocket, type WebSocketConstructor, type WebSocketLike } from "../client.js";
import { ProtocolError } from "../protocol.js";
import { describeRealmClose, REALM_FATAL_CODES, RealmClosedError } from "./close-codes.js";
import { decodePatch, encodeLeading, KeyTable, measureOp, PatchDecodeError } from "./codec.js";
import { type DocumentUpdate, type PendingWrite, RealmDocument } from "./document.js";
import { copyJson, type JsonObject, type JsonValue, type Op, type Path, PatchError, patchFromJson } from "./patch.js";
import {
  DEFAULT_REALM_LIMITS,
  decodeRealmServerMessage,
  encodeRealmClientMessage,
  REALM_HELLO_COMMITS,
  REALM_PROTOCOL_VERSION,
  REALM_SUBPROTOCOL,
  RealmMessageType,
  type RealmLimits,
  type RealmServerMessage,
} from "./protocol.js";
import type {
  ConnectRealmOptions,
  RealmAttach,
  RealmAttachAssertion,
  RealmConnection,
  RealmDraft,
  RealmEvents,
  RealmResumePoint,
  RealmState,
  RealmTicketSource,
  RealmWrite,
  RealmIntentOutcome,
  RealmWriteOutcome,
} from "./types.js";

export type * from "./types.js";

// ---------------------------------------------------------------------------
// URL

const KIND_RE = /^[a-z][a-z0-9_-]{0,63}$/;
const KEY_RE = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * The WebSocket URL of a realm instance, `ws(s)://host:port/realm/<kind>/<key>`,
 * from an http(s) or ws(s) base URL.
 * @throws Error for a bad base URL, a kind outside `[a-z][a-z0-9_-]{0,63}`
 *   or a key outside 1 to 128 of `[A-Za-z0-9_.:-]`
 */
export function realmUrl(base: string, kind: string, key: string): string {
  if (typeof kind !== "string" || !KIND_RE.test(kind)) {
    throw new Error(`tessera: a realm kind is [a-z][a-z0-9_-]{0,63} (got "${String(kind)}")`);
  }
  if (typeof key !== "string" || !KEY_RE.test(key)) {
    throw new Error(`tessera: a realm key is 1 to 128 of [A-Za-z0-9_.:-] (got "${String(key)}")`);
  }
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
  return `${u.protocol}//${u.host}${prefix}/realm/${kind}/${key}`;
}

// ---------------------------------------------------------------------------
// Pacing

/** Bytes a WRITE adds around its patch: array, type, seq (up to 9) and the bin header (up to 5). */
const WRITE_OVERHEAD = 16;

/**
 * The client's copy of the server's per-connection token bucket: one token
 * per WRITE, refilled at `writeRatePerSecond` up to `writeRateBurst`, full
 * when the connection attaches. It keeps a reserve below the server's bucket
 * (1/20 of a second's refill, at least one token when the burst allows) so
 * that network jitter bunching frames together does not push one over.
 */
class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly capacity: number;

  constructor(
    private readonly rate: number,
    burst: number,
    now: number,
  ) {
    const reserve = burst > 1 ? Math.min(burst - 1, Math.max(1, Math.ceil(rate / 20))) : 0;
    this.capacity = burst - reserve;
    this.tokens = this.capacity;
    this.last = now;
  }

  private refill(now: number): void {
    if (now <= this.last) return;
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) * this.rate) / 1000);
    this.last = now;
  }

  /** Ms until a token is there (0: now). */
  wait(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 1000) / this.rate);
  }

  take(): void {
    this.tokens -= 1;
  }

  drain(now: number): void {
    this.refill(now);
    this.tokens = 0;
  }
}

/** Checks the ops against the limits the server checks per op; the reason, or undefined. */
function overLimits(ops: readonly Op[], limits: RealmLimits): string | undefined {
  for (let i = 0; i < ops.length; i++) {
    const { longestKey, leaves } = measureOp(ops[i]!, limits.maxExpandedLeaves);
    if (longestKey > limits.maxRecordKeyLength) {
      return `maxRecordKeyLength: op ${i} has a key of ${longestKey} bytes, at most ${limits.maxRecordKeyLength}`;
    }
    if (leaves > limits.maxExpandedLeaves) {
      return `maxExpandedLeaves: op ${i} expands to more than ${limits.maxExpandedLeaves} leaves`;
    }
  }
  return undefined;
}

const RATE_RE = /writeRatePerSecond/;
const RETRY_RE = /retry in (\d+) ms/;
const MAX_RATE_BACKOFF_MS = 5000;

// ---------------------------------------------------------------------------
// The implementation

type Listener = (...args: never[]) => void;

const OPEN = 1;

interface WriteState {
  resolve: (outcome: RealmWriteOutcome) => void;
  version: number;
  failure: RealmWriteOutcome | undefined;
}

function toBytes(data: unknown): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (Array.isArray(data)) {
    const parts = data.map(toBytes);
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let off = 0;
    for (const p of parts) {
      out.set(p, off);
      off += p.length;
    }
    return out;
  }
  throw new ProtocolError("a message that is not binary");
}

class Connection implements RealmConnection {
  readonly ready: Promise<RealmAttach>;
  readonly url: string;

  private readonly ticketSource: RealmTicketSource;
  private readonly WS: WebSocketConstructor;
  private readonly reconnectOpts: Required<ReconnectOptions> | null;
  private readonly pingIntervalMs: number;
  private readonly idleTimeoutMs: number;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly assertions = new Set<RealmAttachAssertion>();

  private readonly doc = new RealmDocument();
  private readonly writes = new Map<number, WriteState>();
  private readonly intents = new Map<number, (outcome: RealmIntentOutcome) => void>(); // by seq
  private nextWriteId = 1;
  private nextSeq = 1;
  private nextNonce = 1;

  private _state: RealmState = "connecting";
  private _avatar: string | undefined;
  private _limits: RealmLimits = { ...DEFAULT_REALM_LIMITS };
  private _error: Error | undefined;
  private lastAttach: RealmAttach | undefined;

  private ws: WebSocketLike | null = null;
  private generation = 0; // bumps per socket; stale callbacks compare it
  private attached = false; // HYDRATE or RESUME came on the current socket
  private forceHydrate = false; // the next HELLO says (0, 0)
  private hello = { epoch: 0, version: 0 }; // what the current socket's HELLO said it holds
  private inKeys = new KeyTable();
  private outKeys = new KeyTable();
  private bucket: TokenBucket | undefined;
  private rateStrikes = 0; // rate refusals since the last answer that was not one
  private pausedUntil = 0;
  private attempts = 0; // failed attempts in a row
  private ticketRefusals = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private pumpTimer: ReturnType<typeof setTimeout> | undefined;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private resolveReady!: (a: RealmAttach) => void;
  private rejectReady!: (e: Error) => void;

  constructor(
    base: string,
    readonly kind: string,
    readonly key: string,
    options: ConnectRealmOptions,
  ) {
    if (options == null || (typeof options.ticket !== "string" && typeof options.ticket !== "function")) {
      throw new Error("tessera: options.ticket must be a string or a function returning one");
    }
    this.url = realmUrl(base, kind, key);
    this.ticketSource = options.ticket;
    this.WS = resolveWebSocket(options.WebSocket);
    const r = options.reconnect ?? true;
    this.reconnectOpts =
      r === false
        ? null
        : { initialDelayMs: 250, maxDelayMs: 5000, factor: 2, jitter: 0.5, maxAttempts: Infinity, ...(r === true ? {} : r) };
    this.pingIntervalMs = options.pingIntervalMs ?? 5000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 15000;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.ready = new Promise<RealmAttach>((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {}); // the error also goes to `error` listeners
    if (options.resume !== undefined) {
      const { epoch, version, document } = checkResumePoint(options.resume);
      this.doc.hydrate(epoch, version, document); // the HELLO now says it holds this
    }
    void this.connect();
  }

  get state(): RealmState {
    return this._state;
  }
  get document(): JsonObject {
    return this.doc.view;
  }
  get confirmed(): JsonObject {
    return this.doc.confirmed;
  }
  get version(): number {
    return this.doc.version;
  }
  get epoch(): number {
    return this.doc.epoch;
  }
  get avatar(): string | undefined {
    return this._avatar;
  }
  get limits(): RealmLimits {
    return { ...this._limits };
  }
  get pendingWrites(): number {
    return this.doc.pendingCount;
  }
  get error(): Error | undefined {
    return this._error;
  }

  on<E extends keyof RealmEvents>(event: E, listener: RealmEvents[E]): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as Listener);
    return () => this.off(event, listener);
  }

  off<E extends keyof RealmEvents>(event: E, listener: RealmEvents[E]): void {
    this.listeners.get(event)?.delete(listener as Listener);
  }

  private emit<E extends keyof RealmEvents>(event: E, ...args: Parameters<RealmEvents[E]>): void {
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

  private setState(state: RealmState): void {
    if (this._state === state) return;
    this._state = state;
    this.emit("state", state);
  }

  // -- writing ---------------------------------------------------------------

  write(ops: readonly Op[] | ((draft: RealmDraft) => void)): RealmWrite {
    if (this._state === "closed") {
      throw new Error(`tessera: write on a closed connection to realm "${this.kind}/${this.key}"`, { cause: this._error });
    }
    let raw: unknown = ops;
    if (typeof ops === "function") {
      const collected: Op[] = [];
      const draft: RealmDraft = {
        set: (path, value) => (collected.push({ op: "set", path, value }), draft),
        delete: (path) => (collected.push({ op: "delete", path }), draft),
        append: (path, value) => (collected.push({ op: "append", path, value }), draft),
      };
      ops(draft);
      raw = collected;
    }
    return this.addWrite(patchFromJson(raw), false);
  }

  set(path: Path, value: JsonValue): RealmWrite {
    return this.write([{ op: "set", path, value }]);
  }
  delete(path: Path): RealmWrite {
    return this.write([{ op: "delete", path }]);
  }
  intent(name: string, args: JsonValue = {}): Promise<RealmIntentOutcome> {
    const ws = this.ws;
    if (!ws || !this.attached || this._state !== "open") {
      return Promise.resolve({ status: "rejected", code: "not_connected", message: "the realm connection is not open" });
    }
    const seq = this.nextSeq++;
    const bytes = encodeRealmClientMessage({ type: RealmMessageType.Intent, seq, name, args: JSON.stringify(args) });
    return new Promise((resolve) => {
      this.intents.set(seq, resolve);
      ws.send(bytes);
    });
  }

  append(path: Path, value: JsonValue): RealmWrite {
    return this.write([{ op: "append", path, value }]);
  }

  private addWrite(ops: Op[], front: boolean): RealmWrite {
    const id = this.nextWriteId++;
    let resolve!: (o: RealmWriteOutcome) => void;
    const done = new Promise<RealmWriteOutcome>((r) => (resolve = r));
    if (ops.length === 0) {
      resolve({ status: "committed", version: this.doc.version });
      return { id, done };
    }
    let update: DocumentUpdate;
    try {
      update = this.doc.add(id, ops, front);
    } catch (e) {
      const message = (e as Error).message;
      resolve({ status: "rejected", code: "invalid_patch", message, local: true });
      this.emit("reject", { writeId: id, seq: undefined, code: "invalid_patch", message, ops, local: true });
      return { id, done };
    }
    this.writes.set(id, { resolve, version: 0, failure: undefined });
    this.report(update);
    this.pump();
    return { id, done };
  }

  assertOnAttach(fn: RealmAttachAssertion): () => void {
    this.assertions.add(fn);
    if (this.attached && this.lastAttach) this.runAssertions([fn], this.lastAttach);
    return () => {
      this.assertions.delete(fn);
    };
  }

  private runAssertions(fns: RealmAttachAssertion[], attach: RealmAttach): void {
    const batches: Op[][] = [];
    for (const fn of fns) {
      try {
        const ops = fn(this.doc.view, attach);
        if (ops && ops.length > 0) batches.push(patchFromJson(ops));
      } catch (e) {
        this.emit("error", new Error(`tessera: an assertOnAttach callback failed: ${(e as Error)?.message ?? e}`, { cause: e }));
      }
    }
    // Each goes before the queued writes; in reverse, they end up in order.
    for (let i = batches.length - 1; i >= 0; i--) this.addWrite(batches[i]!, true);
  }

  /** Records how parts ended, then resolves the writes with no part left. */
  private fail(writeId: number, outcome: RealmWriteOutcome): void {
    const w = this.writes.get(writeId);
    if (w && !w.failure) w.failure = outcome;
  }

  private settle(): void {
    const live = this.doc.writeIds();
    for (const [id, w] of this.writes) {
      if (live.has(id)) continue;
      this.writes.delete(id);
      w.resolve(w.failure ?? { status: "committed", version: w.version });
    }
  }

  /**
   * Emits what a document update did: local refusals (and drops the parts
   * of those writes not sent yet), then the change; settles finished writes.
   */
  private report(update: DocumentUpdate): void {
    for (const d of update.dropped) {
      const message = `no longer applies to the document: ${d.reason}`;
      this.fail(d.writeId, { status: "rejected", code: "invalid_patch", message, local: true });
      this.emit("reject", { writeId: d.writeId, seq: d.seq, code: "invalid_patch", message, ops: d.ops, local: true });
    }
    let changed = update.changed;
    for (const id of new Set(update.dropped.map((d) => d.writeId))) {
      const rest = this.doc.cancel(id);
      if (rest.changed) changed = true;
      if (rest.dropped.length > 0) this.report({ changed: false, dropped: rest.dropped });
    }
    if (changed) this.emit("change", this.doc.view);
    this.settle();
  }

  /** Sends what the bucket allows of the unsent writes, in order; splits each to fit the limits. */
  private pump(): void {
    clearTimeout(this.pumpTimer);
    this.pumpTimer = undefined;
    const ws = this.ws;
    if (!this.attached || !ws || ws.readyState !== OPEN || !this.bucket) return;
    for (;;) {
      const next = this.doc.nextUnsent();
      if (!next) return;
      const now = this.now();
      const wait = Math.max(this.pausedUntil - now, this.bucket.wait(now));
      if (wait > 0) {
        this.pumpTimer = setTimeout(() => this.pump(), wait);
        return;
      }
      const limits = this._limits;
      let over = overLimits(next.ops, limits);
      let count = 0;
      let bytes: Uint8Array | undefined;
      if (over === undefined) {
        ({ count, bytes } = encodeLeading(next.ops, this.outKeys, limits.maxPatchesPerFrame, limits.maxFrameBytes - WRITE_OVERHEAD));
        if (count === 0) over = `maxFrameBytes: op ${0} alone encodes to more than ${limits.maxFrameBytes - WRITE_OVERHEAD} bytes`;
      }
      if (over !== undefined) {
        this.refuseLocally(next, `limits_exceeded: ${over}`);
        continue;
      }
      const seq = this.nextSeq++;
      this.bucket.take();
      this.doc.markSent(next, seq, count);
      ws.send(encodeRealmClientMessage({ type: RealmMessageType.Write, seq, patch: bytes! }));
    }
  }

  /** Refuses an unsent write before sending it: it and the rest of its write are dropped. */
  private refuseLocally(w: PendingWrite, message: string): void {
    const { cancelled, ...update } = this.doc.cancel(w.writeId);
    const ops = cancelled.flatMap((c) => c.ops);
    this.fail(w.writeId, { status: "rejected", code: "limits_exceeded", message, local: true });
    this.emit("reject", { writeId: w.writeId, seq: undefined, code: "limits_exceeded", message, ops, local: true });
    this.report(update);
  }

  // -- connecting ------------------------------------------------------------

  private async connect(): Promise<void> {
    const gen = ++this.generation;
    this.setState("connecting");
    let ticket: string;
    try {
      ticket =
        typeof this.ticketSource === "string" ? this.ticketSource : await this.ticketSource({ kind: this.kind, key: this.key });
      if (typeof ticket !== "string" || ticket === "") throw new Error("the ticket function returned no ticket");
    } catch (e) {
      if (gen !== this.generation || this._state === "closed") return;
      const err = new Error(`tessera: getting a ticket for realm "${this.kind}/${this.key}" failed: ${(e as Error)?.message ?? e}`, {
        cause: e,
      });
      this.emit("error", err);
      this.scheduleReconnect(err);
      return;
    }
    if (gen !== this.generation || this._state === "closed") return;
    let ws: WebSocketLike;
    try {
      ws = new this.WS(this.url, REALM_SUBPROTOCOL);
    } catch (e) {
      const err = new Error(`tessera: cannot open ${this.url}: ${(e as Error).message}`, { cause: e });
      this.emit("error", err);
      this.scheduleReconnect(err);
      return;
    }
    this.ws = ws;
    this.attached = false;
    this.inKeys = new KeyTable();
    this.outKeys = new KeyTable();
    ws.binaryType = "arraybuffer";
    ws.onopen = () => {
      if (gen !== this.generation) return;
      this.armIdle();
      const holds = !this.forceHydrate && this.doc.hydrated;
      this.hello = { epoch: holds ? this.doc.epoch : 0, version: holds ? this.doc.version : 0 };
      ws.send(
        encodeRealmClientMessage({
          type: RealmMessageType.Hello,
          protocol: REALM_PROTOCOL_VERSION,
          ticket,
          epoch: this.hello.epoch,
          version: this.hello.version,
          flags: REALM_HELLO_COMMITS,
        }),
      );
      this.startPings(ws);
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
    let msg: RealmServerMessage;
    try {
      if (typeof data === "string") throw new ProtocolError("the server sent a text message");
      msg = decodeRealmServerMessage(toBytes(data));
    } catch (e) {
      this.protocolError(ws, e as Error);
      return;
    }
    try {
      this.handle(ws, msg);
    } catch (e) {
      if (e instanceof PatchError) this.outOfStep(ws, e);
      else if (e instanceof ProtocolError || e instanceof PatchDecodeError) this.protocolError(ws, e);
      else throw e;
    }
  }

  private handle(ws: WebSocketLike, msg: RealmServerMessage): void {
    switch (msg.type) {
      case RealmMessageType.Hydrate: {
        const ops = decodePatch(msg.state, this.inKeys);
        const op = ops[0];
        if (ops.length !== 1 || op?.op !== "set" || op.path.length !== 0 || !isObject(op.value)) {
          throw new ProtocolError("HYDRATE state must be one op, set [] to an object");
        }
        const update = this.doc.hydrate(msg.epoch, msg.version, op.value);
        this.forceHydrate = false;
        this.attach(ws, { mode: "hydrate", epoch: msg.epoch, version: msg.version, avatar: msg.avatar, limits: msg.limits }, update);
        return;
      }
      case RealmMessageType.Resume:
        if (this.hello.epoch === 0 && this.hello.version === 0) {
          throw new ProtocolError("RESUME, but HELLO said the client holds nothing");
        }
        if (msg.epoch !== this.hello.epoch || msg.from !== this.hello.version) {
          throw new ProtocolError(
            `RESUME from epoch ${msg.epoch} version ${msg.from}, but HELLO said epoch ${this.hello.epoch} version ${this.hello.version}`,
          );
        }
        this.doc.resume(msg.epoch, msg.from);
        this.attach(ws, { mode: "resume", epoch: msg.epoch, version: msg.from, head: msg.head, avatar: msg.avatar, limits: msg.limits });
        return;
      case RealmMessageType.Ping:
        if (ws.readyState === OPEN) ws.send(encodeRealmClientMessage({ type: RealmMessageType.Pong, nonce: msg.nonce }));
        return;
      case RealmMessageType.Pong:
        return;
      default:
        break;
    }
    if (!this.attached) throw new ProtocolError(`message type ${msg.type} before HYDRATE or RESUME`);
    switch (msg.type) {
      case RealmMessageType.Commit:
        this.onCommit(msg.version, msg.patch, msg.seq);
        return;
      case RealmMessageType.Commits:
        // Each entry exactly as the COMMIT or ACK it stands for, in order.
        for (const e of msg.entries) {
          if (e.patch === undefined) this.onAck(e.seq!, e.version);
          else this.onCommit(e.version, e.patch, e.seq);
        }
        return;
      case RealmMessageType.Ack:
        this.onAck(msg.seq, msg.version);
        return;
      case RealmMessageType.Reject: {
        const intent = this.intents.get(msg.seq);
        if (intent) {
          this.intents.delete(msg.seq);
          intent({ status: "rejected", code: msg.code, message: msg.message });
          return;
        }
        this.onReject(msg.seq, msg.code, msg.message);
        return;
      }
    }
  }

  private onCommit(version: number, patch: Uint8Array, seq: number | undefined): void {
    const ops = decodePatch(patch, this.inKeys);
    const update = this.doc.commit(version, ops, seq);
    const r = update.replaced;
    if (r) this.answered(r.writeId, version);
    const own = seq !== undefined;
    this.emit("commit", {
      version,
      ops,
      own,
      ...(r ? { writeId: r.writeId } : {}),
      ...(own ? { seq } : {}),
      sliced: own,
    });
    this.report(update);
  }

  private onAck(seq: number, version: number): void {
    const intent = this.intents.get(seq);
    if (intent) {
      this.intents.delete(seq);
      intent({ status: "done", version });
      return;
    }
    const update = this.doc.ack(seq, version);
    const w = update.write;
    this.answered(w.writeId, version);
    this.emit("commit", { version, ops: w.ops, own: true, writeId: w.writeId, seq, sliced: false });
    this.report(update);
  }

  private answered(writeId: number, version: number): void {
    this.rateStrikes = 0;
    const w = this.writes.get(writeId);
    if (w) w.version = version;
  }

  private onReject(seq: number, code: string, message: string): void {
    if (code === "limits_exceeded" && RATE_RE.test(message)) {
      // Refused for the rate: nothing applied; send it again after a pause.
      const { removed } = this.doc.unsend(seq);
      if (removed) {
        this.settle();
        return;
      }
      this.rateStrikes++;
      const rate = this._limits.writeRatePerSecond;
      const retry = Number(RETRY_RE.exec(message)?.[1] ?? 0);
      const base = Math.max(retry, Math.ceil(1000 / rate));
      const delay = Math.min(MAX_RATE_BACKOFF_MS, base * 2 ** (this.rateStrikes - 1));
      const now = this.now();
      this.bucket?.drain(now);
      this.pausedUntil = Math.max(this.pausedUntil, now + delay);
      this.pump();
      return;
    }
    const update = this.doc.reject(seq);
    const w = update.write;
    if (!w.dropped) {
      this.fail(w.writeId, { status: "rejected", code, message, local: false });
      this.emit("reject", { writeId: w.writeId, seq, code, message, ops: w.ops, local: false });
    }
    const rest = this.doc.cancel(w.writeId);
    this.report({ changed: update.changed || rest.changed, dropped: [...update.dropped, ...rest.dropped] });
  }

  private attach(ws: WebSocketLike, attach: RealmAttach, update?: DocumentUpdate): void {
    this.attached = true;
    this.attempts = 0;
    this.ticketRefusals = 0;
    this.rateStrikes = 0;
    this.pausedUntil = 0;
    this._avatar = attach.avatar;
    this._limits = { ...attach.limits };
    this.bucket = new TokenBucket(attach.limits.writeRatePerSecond, attach.limits.writeRateBurst, this.now());
    this.lastAttach = attach;
    this.setState("open");
    if (update) this.report(update);
    if (this.ws !== ws) return; // a listener closed or reconnected
    this.emit("open", attach);
    this.resolveReady(attach);
    if (this.ws !== ws) return;
    this.runAssertions([...this.assertions], attach);
    this.pump();
  }

  private protocolError(ws: WebSocketLike, e: Error): void {
    this.emit("error", new ProtocolError(`tessera: bad message from the realm server: ${e.message}`));
    this.forceHydrate = true;
    this.abandon(ws, "bad message from the server");
    this.scheduleReconnect(e);
  }

  /** A commit does not apply to the confirmed document: the copy is out of step; hydrate again. */
  private outOfStep(ws: WebSocketLike, e: Error): void {
    this.emit("error", new Error(`tessera: realm "${this.kind}/${this.key}" document out of step with the server: ${e.message}`, { cause: e }));
    this.forceHydrate = true;
    this.abandon(ws, "document out of step");
    this.scheduleReconnect(e, true);
  }

  /** Leaves a socket: forgets it and closes it. */
  private abandon(ws: WebSocketLike, reason: string): void {
    this.dropSocket();
    try {
      ws.close(4000, reason);
    } catch {
      /* already closing */
    }
  }

  // -- closing and reconnecting ----------------------------------------------

  private onClose(code: number, reason: string): void {
    const wasAttached = this.attached;
    this.dropSocket();
    if (this._state === "closed") return;
    let fatal: Error | undefined;
    if (code === 4002) {
      this.ticketRefusals++;
      if (typeof this.ticketSource !== "function" || this.ticketRefusals >= 2) {
        fatal = new RealmClosedError(this.kind, this.key, code, reason, describeRealmClose(code));
      }
    } else if (REALM_FATAL_CODES.has(code)) {
      fatal = new RealmClosedError(this.kind, this.key, code, reason, describeRealmClose(code));
    }
    if (fatal) {
      this.emit("close", { code, reason, reconnecting: false });
      this.finish(fatal);
      return;
    }
    const reconnecting = this.reconnectOpts !== null;
    this.emit("close", { code, reason, reconnecting });
    const cause = new RealmClosedError(
      this.kind,
      this.key,
      code,
      reason,
      code === 1006 && !wasAttached ? `could not connect to ${this.url}` : describeRealmClose(code),
    );
    if (!reconnecting) {
      this.finish(wasAttached ? undefined : cause);
      return;
    }
    this.scheduleReconnect(cause, code === 4002);
  }

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
      this.finish(new Error(`tessera: gave up reconnecting to realm "${this.kind}/${this.key}" after ${this.attempts} attempts: ${cause.message}`, { cause }));
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

  close(): void {
    if (this._state === "closed") return;
    this.finish(undefined);
  }

  private startPings(ws: WebSocketLike): void {
    clearInterval(this.pingTimer);
    if (this.pingIntervalMs <= 0) return;
    this.pingTimer = setInterval(() => {
      if (ws.readyState !== OPEN) return;
      ws.send(encodeRealmClientMessage({ type: RealmMessageType.Ping, nonce: this.nextNonce++ }));
    }, this.pingIntervalMs);
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
      this.scheduleReconnect(new Error("tessera: the realm server went silent"));
    }, this.idleTimeoutMs);
  }

  /**
   * Forgets the current socket (its late callbacks are ignored) and its
   * timers. Writes sent on it and not answered are forgotten and reported
   * `unknown`: the server may have committed them (an ACK comes only once a
   * write is durable, so one that was durable but not yet answered would be
   * applied twice if sent again); a RESUME replays it as a commit if it was.
   */
  private dropSocket(): void {
    this.generation++;
    this.attached = false;
    clearInterval(this.pingTimer);
    clearTimeout(this.idleTimer);
    clearTimeout(this.pumpTimer);
    this.pingTimer = undefined;
    this.idleTimer = undefined;
    this.pumpTimer = undefined;
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      ws.onopen = null;
      ws.onmessage = null;
      ws.onclose = null;
      ws.onerror = () => {};
    }
    for (const resolve of this.intents.values()) resolve({ status: "unknown" });
    this.intents.clear();
    const { forgotten, ...update } = this.doc.dropSent();
    for (const f of forgotten) {
      this.fail(f.writeId, { status: "unknown" });
      this.emit("unknown", { writeId: f.writeId, seq: f.seq!, ops: f.ops });
    }
    this.report(update);
  }

  private finish(error: Error | undefined): void {
    const ws = this.ws;
    this.dropSocket();
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    if (ws) {
      try {
        ws.close(1000, "client closed");
      } catch {
        /* ignore */
      }
    }
    const { removed, ...update } = this.doc.clearPending();
    for (const r of removed) this.fail(r.writeId, { status: "cancelled" });
    this._error = error;
    this.setState("closed");
    this.report(update);
    if (error) {
      this.emit("error", error);
      this.rejectReady(error);
    } else {
      this.rejectReady(new Error(`tessera: connection to realm "${this.kind}/${this.key}" closed`));
    }
  }
}

function isObject(v: JsonValue): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const MAX_VERSION = 2 ** 53;

/** Checks the `resume` option and copies its document. */
function checkResumePoint(p: RealmResumePoint): RealmResumePoint {
  if (p === null || typeof p !== "object") throw new Error("tessera: options.resume must be {epoch, version, document}");
  for (const field of ["epoch", "version"] as const) {
    const n = p[field];
    if (!Number.isInteger(n) || n < 0 || n > MAX_VERSION) {
      throw new Error(`tessera: options.resume.${field} must be an integer from 0 to 2^53 (got ${String(n)})`);
    }
  }
  const document = copyJson(p.document);
  if (!isObject(document)) throw new Error("tessera: options.resume.document must be a JSON object");
  return { epoch: p.epoch, version: p.version, document };
}

/**
 * Connects to a realm instance and keeps a live copy of its document.
 *
 * ```ts
 * const realm = connectRealm("http://127.0.0.1:4321", "match", "m-42", {
 *   ticket: async () => (await callFunction<Join>(url, "joinMatch", {}, { token })).ticket,
 * });
 * realm.on("change", (doc) => draw(doc));
 * realm.assertOnAttach((doc, { avatar }) => [{ op: "set", path: ["players", avatar], value: { ready: false } }]);
 * realm.set(["players", me, "ready"], true);
 * ```
 *
 * HELLO carries the (epoch, version) the client holds, so after a
 * reconnect the server RESUMEs (replays the missed commits) rather than
 * sending the whole document again; with the `resume` option the first
 * connect does too, from a document kept from before (a page reload). The connection reconnects with
 * exponential backoff and jitter after a dropped connection, 1001, 1008,
 * 4008, 4014 and other closes; after 4002 (ticket expired) at once with a
 * fresh ticket when `ticket` is a function. It does not reconnect after
 * 4001, 4003, 4004, 4009, 4010, 4012, 4013, 1009 or 4000: `state` becomes
 * `closed` and `error` holds a {@link RealmClosedError}.
 *
 * Writes sent but not answered when a connection drops are dropped from
 * the document and reported with the `unknown` event (their `done` is
 * `unknown`): the server may or may not have committed them, and sending
 * them again could apply them twice. Writes not yet sent stay queued and go
 * out after the reconnect.
 *
 * @param url the server's base URL, `http(s)://host:port` (or `ws(s)://`)
 * @param kind the realm kind (`tessera.json` `"realms"`)
 * @param key the realm instance's key: 1 to 128 of `[A-Za-z0-9_.:-]`
 * @param options the ticket and tuning; see {@link ConnectRealmOptions}
 * @throws Error for a missing ticket, a bad URL, kind or key, or no WebSocket implementation
 */
export function connectRealm(url: string, kind: string, key: string, options: ConnectRealmOptions): RealmConnection {
  return new Connection(url, kind, key, options);
}
