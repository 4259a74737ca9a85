/**
 * The public types of `connectRealm` (`connect.ts`): its options, events,
 * write outcomes and the {@link RealmConnection} interface.
 *
 * @packageDocumentation
 */
import type { ReconnectOptions, WebSocketConstructor } from "../client.js";
import type { JsonObject, JsonValue, Op, Path } from "./patch.js";
import type { RealmLimits } from "./protocol.js";

/** The lifecycle of a {@link RealmConnection}. */
export type RealmState = "connecting" | "open" | "closed";

/**
 * A realm ticket (kind `"realm"`, resource `<kind>/<key>`), or a function
 * returning one, called before the first connect and again before every
 * reconnect (so it can fetch a fresh one from the app's join function).
 */
export type RealmTicketSource = string | ((realm: { kind: string; key: string }) => string | Promise<string>);

/** Options of {@link connectRealm}. */
export interface ConnectRealmOptions {
  /** The ticket, or a function returning one; see {@link RealmTicketSource}. */
  ticket: RealmTicketSource;
  /** The WebSocket implementation (default: the global one, or `ws` in Node). */
  WebSocket?: WebSocketConstructor;
  /** Reconnect timing, or `false` to never reconnect (default: on). */
  reconnect?: ReconnectOptions | boolean;
  /** How often to PING the server, in ms (default 5000; 0: never). */
  pingIntervalMs?: number;
  /**
   * Close and reconnect when nothing arrives for this long, in ms (default
   * 15000; 0: never). The PINGs' answers keep a quiet realm's connection alive.
   */
  idleTimeoutMs?: number;
  /** Random numbers in [0, 1) for the backoff jitter (default `Math.random`). */
  random?: () => number;
  /** A clock in ms for the write rate (default `Date.now`). */
  now?: () => number;
  /**
   * Start from a document this client held before, such as one kept in
   * `sessionStorage` across a page reload: the first HELLO says its epoch
   * and version, so the server answers RESUME and sends only the commits
   * after it; a HYDRATE (another epoch, too far behind) replaces it as
   * usual. Until then {@link RealmConnection.document} is this document.
   * Keep {@link RealmConnection.confirmed} (not `document`, which has the
   * pending writes in it) with the `epoch` and `version` it is at.
   */
  resume?: RealmResumePoint;
}

/** A document held at (`epoch`, `version`): {@link ConnectRealmOptions.resume}. */
export interface RealmResumePoint {
  /** The realm's epoch (an integer from 0 to 2^53). */
  epoch: number;
  /** The version `document` is at (an integer from 0 to 2^53). */
  version: number;
  /** The confirmed document at that version (JSON; copied). */
  document: JsonObject;
}

/** How the server (re)attached the connection: {@link RealmConnection.on} `open`. */
export interface RealmAttach {
  /** `hydrate`: the whole document came; `resume`: the missed commits follow. */
  mode: "hydrate" | "resume";
  epoch: number;
  /** The version the document is at (after a resume: the version resumed from). */
  version: number;
  /** After a resume: the head the replayed commits lead to. */
  head?: number;
  /** The identity of this connection (the ticket's subscriber). */
  avatar: string;
  /** The realm kind's advertised limits. */
  limits: RealmLimits;
}

/** A commit applied to the confirmed document: the `commit` event. */
export interface RealmCommit {
  version: number;
  /** The ops applied (for an own write confirmed by ACK: the ops as written). */
  ops: readonly Op[];
  /** This client's own write (an ACK, or a COMMIT with its seq). */
  own: boolean;
  /** The {@link RealmWrite.id} of an own write. */
  writeId?: number;
  /** The WRITE seq of an own write. */
  seq?: number;
  /** An own write the server changed by slicing (a COMMIT with seq): `ops` are what this client may read of it. */
  sliced: boolean;
}

/** A write (or part of one) that was refused: the `reject` event. */
export interface RealmRejection {
  /** The {@link RealmWrite.id}. */
  writeId: number;
  /** The WRITE seq, when it was sent. */
  seq: number | undefined;
  /**
   * `limits_exceeded`, `permission_denied`, `invalid_patch` (from the
   * server, or locally: it no longer applies to the document) or another
   * code the server sends.
   */
  code: string;
  /** The explanation (the server's, or the client's for a local refusal). */
  message: string;
  /** The ops refused. */
  ops: readonly Op[];
  /** Refused by the client itself, not by a REJECT (the server was not asked, or will refuse it). */
  local: boolean;
}

/**
 * A write that was sent on a connection that dropped before its answer:
 * the server may or may not have committed it (the `unknown` event).
 */
export interface RealmUnknownWrite {
  writeId: number;
  seq: number;
  ops: readonly Op[];
}

/**
 * How an intent ended ({@link RealmConnection.intent}): `done` (its commit,
 * already applied, is `version`, or it changed nothing at `version`),
 * `rejected` (`code` is `refused` with the module's reason, `failed`,
 * `unavailable`, `invalid_intent`, `invalid_patch`, `limits_exceeded` or
 * `not_connected`), or `unknown` (the connection dropped before the answer:
 * the server may have applied it).
 */
export type RealmIntentOutcome =
  | { status: "done"; version: number }
  | { status: "rejected"; code: string; message: string }
  | { status: "unknown" };

/** How a write ended: {@link RealmWrite.done}. */
export type RealmWriteOutcome =
  | { status: "committed"; version: number }
  | { status: "rejected"; code: string; message: string; local: boolean }
  | { status: "unknown" }
  | { status: "cancelled" };

/** A write made with {@link RealmConnection.write}. */
export interface RealmWrite {
  /** The client's id for the write, in events (`writeId`). */
  readonly id: number;
  /**
   * Resolves (never rejects) when every part of the write is settled:
   * `committed` (with the last part's version) when all were, else the
   * first failure: `rejected`, `unknown` (sent on a connection that dropped
   * before the answer) or `cancelled` (never sent: the connection closed
   * for good).
   */
  readonly done: Promise<RealmWriteOutcome>;
}

/** Collects ops for {@link RealmConnection.write}; each method returns the draft. */
export interface RealmDraft {
  set(path: Path, value: JsonValue): RealmDraft;
  delete(path: Path): RealmDraft;
  append(path: Path, value: JsonValue): RealmDraft;
}

/** What returns ops to write after each attach: {@link RealmConnection.assertOnAttach}. */
export type RealmAttachAssertion = (document: JsonObject, attach: RealmAttach) => readonly Op[] | null | undefined | void;

/** What a realm connection reports; see {@link RealmConnection.on}. */
export interface RealmEvents {
  /** The shown document ({@link RealmConnection.document}) changed. */
  change: (document: JsonObject) => void;
  /** A commit was applied to the confirmed document (another writer's or an own write). */
  commit: (commit: RealmCommit) => void;
  /** A write or part of one was refused, by the server or locally. */
  reject: (rejection: RealmRejection) => void;
  /** A sent write's fate is unknown: its connection dropped before the answer. */
  unknown: (write: RealmUnknownWrite) => void;
  /** The server attached the connection (HYDRATE or RESUME); once per (re)connect. */
  open: (attach: RealmAttach) => void;
  /** {@link RealmConnection.state} changed. */
  state: (state: RealmState) => void;
  /** A WebSocket closed; `reconnecting` says whether another attempt follows. */
  close: (info: { code: number; reason: string; reconnecting: boolean }) => void;
  /** A problem: a refused ticket, a malformed server message, a document out of step, a failing ticket function. */
  error: (error: Error) => void;
}

/** A live copy of one realm instance; created by {@link connectRealm}. */
export interface RealmConnection {
  /** The realm kind. */
  readonly kind: string;
  /** The realm instance's key. */
  readonly key: string;
  /** The WebSocket URL, `ws(s)://host:port/realm/<kind>/<key>`. */
  readonly url: string;
  /** `connecting` (also while waiting to reconnect), `open` (attached) or `closed` (for good). */
  readonly state: RealmState;
  /**
   * The document to show: the confirmed document with the pending writes
   * applied (`{}` before the first HYDRATE, or the `resume` option's document). A new object after each change
   * (unchanged subtrees are shared), never mutated: do not mutate it either.
   */
  readonly document: JsonObject;
  /** The document as the server confirmed it, at {@link version}. */
  readonly confirmed: JsonObject;
  /** The version of the confirmed document: the last commit applied (0 before a hydrate, or the `resume` option's). */
  readonly version: number;
  /** The realm's epoch the document is from (0 before a hydrate, or the `resume` option's). */
  readonly epoch: number;
  /** This connection's identity (the ticket's subscriber), once attached. */
  readonly avatar: string | undefined;
  /** The realm kind's advertised limits (the defaults until attached). */
  readonly limits: RealmLimits;
  /** Writes (or parts of split writes) not yet confirmed or refused. */
  readonly pendingWrites: number;
  /** Why the connection closed for good (`state` is `closed`), if not by {@link close}. */
  readonly error: Error | undefined;
  /** Resolves with the first attach; rejects if the connection closes for good before. */
  readonly ready: Promise<RealmAttach>;
  /**
   * Writes ops: they apply to {@link document} at once and go to the server
   * as a WRITE when the connection is open (queued before). A write over
   * the realm's `maxPatchesPerFrame` ops or `maxFrameBytes` bytes is split
   * into several WRITEs, which the server commits one by one (so a split
   * write is not atomic; when one part is refused, the parts not yet sent
   * are dropped). Writes are paced by `writeRatePerSecond` and
   * `writeRateBurst`. An empty write is a no-op, committed at once.
   *
   * A write that does not apply to the document now is refused at once
   * (`reject` event with `local: true`; `done` resolves `rejected`). One
   * with an op over `maxRecordKeyLength`, `maxExpandedLeaves` or
   * `maxFrameBytes` on its own is refused (`limits_exceeded`, local) when
   * its turn to be sent comes.
   *
   * @param ops the ops (JSON form), or a function that adds them to a {@link RealmDraft}
   * @throws PatchError for ops that are not well formed (see `patchFromJson`);
   *   Error once the connection is closed
   */
  write(ops: readonly Op[] | ((draft: RealmDraft) => void)): RealmWrite;
  /** `write([{ op: "set", path, value }])`. */
  set(path: Path, value: JsonValue): RealmWrite;
  /** `write([{ op: "delete", path }])`. */
  delete(path: Path): RealmWrite;
  /** `write([{ op: "append", path, value }])`. */
  append(path: Path, value: JsonValue): RealmWrite;
  /**
   * Asks the realm's module to act (`realm_apply` with `name` and `args`):
   * the module decides what changes, so nothing is applied locally; the
   * commit arrives like any other. Needs an open, attached connection.
   */
  intent(name: string, args?: JsonValue): Promise<RealmIntentOutcome>;
  /**
   * Registers `fn` to run after every (re)attach (HYDRATE or RESUME, also
   * at once if the connection is attached now), with the document and the
   * attach: the ops it returns are written first, before any write still
   * queued. Use it to re-assert what the server forgets when this avatar
   * detaches, such as a presence row. Returns a function that unregisters it.
   */
  assertOnAttach(fn: RealmAttachAssertion): () => void;
  /** Subscribes to an event; returns a function that unsubscribes. */
  on<E extends keyof RealmEvents>(event: E, listener: RealmEvents[E]): () => void;
  /** Unsubscribes a listener added with {@link on}. */
  off<E extends keyof RealmEvents>(event: E, listener: RealmEvents[E]): void;
  /**
   * Drops the current socket and connects again at once (with a HELLO for
   * what it holds). Writes sent and not answered become `unknown`. Does
   * nothing once closed.
   */
  reconnect(): void;
  /** Closes the connection for good. Idempotent. */
  close(): void;
}

