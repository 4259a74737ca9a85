/**
 * {@link RealmDocument}: a realm client's copy of the document
 * (`docs/protocol.md` "Realms"): the **confirmed** document (what the
 * server sent), the client's **pending** writes in order, and the **view**,
 * the confirmed document with the pending writes applied, which is what a
 * client shows. Pure bookkeeping, no I/O: `connectRealm` feeds it the
 * server's messages and takes the writes to send from it.
 *
 * - a local write applies to the view at once (or is refused when it does
 *   not apply to it) and waits, unsent, in the pending list;
 * - ACK moves the write it names into the confirmed document (the view
 *   stays the same object when it was the oldest pending write);
 * - COMMIT with a seq replaces that pending write by the commit (the
 *   server sliced it); REJECT drops it;
 * - a COMMIT of another writer applies to the confirmed document and the
 *   pending writes are applied again on top: one that no longer applies is
 *   dropped (the server will refuse it) and reported;
 * - HYDRATE replaces the confirmed document; the pending writes are applied
 *   again on top of it.
 *
 * @packageDocumentation
 */
import { ProtocolError } from "../protocol.js";
import { applyPatch, type JsonObject, type Op } from "./patch.js";

/** A write the client made that the server has not confirmed yet. */
export interface PendingWrite {
  /** The client's id for the write ({@link RealmWrite.id}); parts of a split write share it. */
  readonly writeId: number;
  /** Its ops (a part of the write's ops when the write was split to fit the limits). */
  readonly ops: readonly Op[];
  /** The seq of the WRITE that carries it, or `undefined` while it is not sent. */
  readonly seq: number | undefined;
  /**
   * Dropped from the view because it no longer applies after a commit; the
   * server's answer to it (normally a REJECT) is still to come.
   */
  readonly dropped: boolean;
}

interface Entry {
  writeId: number;
  ops: readonly Op[];
  seq: number | undefined;
  dropped: boolean;
}

/** What a change of a {@link RealmDocument} did to the view and the pending writes. */
export interface DocumentUpdate {
  /** The view is a different object than before. */
  changed: boolean;
  /**
   * Pending writes that no longer apply and were dropped from the view
   * (report them as refused), with why (the `PatchError` message).
   */
  dropped: (PendingWrite & { reason: string })[];
}

/**
 * The confirmed document, pending writes and view of one realm; see the
 * module documentation. Methods that take a server message throw a
 * {@link ProtocolError} for a message that does not fit what the document
 * holds (a version that does not advance, an unknown seq) and a
 * `PatchError` when a commit does not apply to the confirmed document (the
 * copy is out of step with the server and must hydrate again); in both
 * cases nothing changed.
 */
export class RealmDocument {
  private _confirmed: JsonObject = {};
  private _view: JsonObject = {};
  private _epoch = 0;
  private _version = 0;
  private entries: Entry[] = [];
  private _hydrated = false;

  /** What the server sent: the document at {@link version}. */
  get confirmed(): JsonObject {
    return this._confirmed;
  }
  /** The confirmed document with the pending writes applied; what to show. */
  get view(): JsonObject {
    return this._view;
  }
  /** The realm's epoch the document is from (0 before a hydrate). */
  get epoch(): number {
    return this._epoch;
  }
  /** The version of the confirmed document: the last commit applied (0 before a hydrate). */
  get version(): number {
    return this._version;
  }
  /** The pending writes, oldest first (a snapshot; changes do not show in it). */
  get pending(): readonly PendingWrite[] {
    return this.entries.map((e) => ({ ...e }));
  }
  /**
   * Whether a HYDRATE came. Before it the document is unknown: the view is
   * `{}` and local writes wait, unapplied, to be applied on top of the
   * hydrated document (where those that do not apply are dropped).
   */
  get hydrated(): boolean {
    return this._hydrated;
  }
  /** The write ids that still have pending parts. */
  writeIds(): Set<number> {
    return new Set(this.entries.map((e) => e.writeId));
  }
  /** How many pending writes there are. */
  get pendingCount(): number {
    return this.entries.length;
  }

  /** HYDRATE: the document is `state` at (`epoch`, `version`); pending writes are applied on top. */
  hydrate(epoch: number, version: number, state: JsonObject): DocumentUpdate {
    this._confirmed = state;
    this._hydrated = true;
    this._epoch = epoch;
    this._version = version;
    return this.rebase();
  }

  /**
   * RESUME: checks that the server resumes from what the document holds.
   * @throws {@link ProtocolError} when `epoch` or `from` are not the held ones
   */
  resume(epoch: number, from: number): void {
    if (!this._hydrated) throw new ProtocolError("RESUME, but the client holds no document");
    if (epoch !== this._epoch || from !== this._version) {
      throw new ProtocolError(
        `RESUME from epoch ${epoch} version ${from}, but the client holds epoch ${this._epoch} version ${this._version}`,
      );
    }
  }

  private checkVersion(version: number, what: string): void {
    if (version <= this._version) {
      throw new ProtocolError(`${what} version ${version} does not follow version ${this._version}`);
    }
  }

  private find(seq: number, what: string): number {
    const i = this.entries.findIndex((e) => e.seq === seq);
    if (i < 0) throw new ProtocolError(`${what} for seq ${seq}, which is not a pending write`);
    return i;
  }

  /**
   * COMMIT `version`: applies `ops` to the confirmed document. With `seq`
   * (the client's own write, sliced by the server), the pending write with
   * that seq is replaced by the commit. Returns the pending write it
   * replaced, if any.
   */
  commit(version: number, ops: readonly Op[], seq?: number): DocumentUpdate & { replaced: PendingWrite | undefined } {
    this.checkVersion(version, "COMMIT");
    const i = seq === undefined ? -1 : this.find(seq, "COMMIT");
    const confirmed = applyPatch(this._confirmed, ops);
    const replaced = i >= 0 ? this.entries.splice(i, 1)[0] : undefined;
    this._confirmed = confirmed;
    this._version = version;
    return { ...this.rebase(), replaced: replaced && { ...replaced } };
  }

  /** ACK: the pending write `seq` is durable as `version`, exactly as sent. Returns it. */
  ack(seq: number, version: number): DocumentUpdate & { write: PendingWrite } {
    this.checkVersion(version, "ACK");
    const i = this.find(seq, "ACK");
    const entry = this.entries[i]!;
    const confirmed = applyPatch(this._confirmed, entry.ops);
    this.entries.splice(i, 1);
    this._confirmed = confirmed;
    this._version = version;
    if (i === 0 && !entry.dropped) {
      // The view was confirmed + this write + the rest: it is still exactly that.
      return { changed: false, dropped: [], write: { ...entry } };
    }
    return { ...this.rebase(), write: { ...entry } };
  }

  /** REJECT: the pending write `seq` was refused; it is dropped. Returns it. */
  reject(seq: number): DocumentUpdate & { write: PendingWrite } {
    const i = this.find(seq, "REJECT");
    const [entry] = this.entries.splice(i, 1);
    if (entry!.dropped) return { changed: false, dropped: [], write: { ...entry! } };
    return { ...this.rebase(), write: { ...entry! } };
  }

  /**
   * A local write: applies `ops` to the view and adds them to the pending
   * writes, last (or with `front`, before every write not yet sent). Before
   * the first hydrate it is only queued.
   * @throws `PatchError` when they do not apply to the view (nothing changes)
   */
  add(writeId: number, ops: readonly Op[], front = false): DocumentUpdate {
    const entry: Entry = { writeId, ops, seq: undefined, dropped: false };
    if (!this._hydrated) {
      if (front) this.entries.unshift(entry);
      else this.entries.push(entry);
      return { changed: false, dropped: [] };
    }
    if (!front) {
      this._view = applyPatch(this._view, ops);
      this.entries.push(entry);
      return { changed: true, dropped: [] };
    }
    const at = this.entries.findIndex((e) => e.seq === undefined);
    const before = at < 0 ? this.entries : this.entries.slice(0, at);
    let view = this._confirmed;
    for (const e of before) if (!e.dropped) view = applyPatch(view, e.ops);
    applyPatch(view, ops); // throws when it does not apply here
    this.entries.splice(at < 0 ? this.entries.length : at, 0, entry);
    return this.rebase();
  }

  /** The oldest pending write that is not sent yet. */
  nextUnsent(): PendingWrite | undefined {
    const e = this.entries.find((x) => x.seq === undefined && !x.dropped);
    return e && { ...e };
  }

  private entryOf(write: PendingWrite): Entry {
    const e = this.entries.find((x) => x.writeId === write.writeId && x.seq === write.seq && x.ops === write.ops);
    if (!e) throw new Error("tessera: not a pending write of this document");
    return e;
  }

  /**
   * Marks the unsent pending write `write` as sent as WRITE `seq`, with
   * only its first `count` ops (default all): the rest stay pending right
   * after it as a separate unsent write of the same write id (a write split
   * to fit the limits). The view does not change.
   */
  markSent(write: PendingWrite, seq: number, count = write.ops.length): void {
    const e = this.entryOf(write);
    if (count < e.ops.length) {
      const rest: Entry = { writeId: e.writeId, ops: e.ops.slice(count), seq: undefined, dropped: false };
      e.ops = e.ops.slice(0, count);
      this.entries.splice(this.entries.indexOf(e) + 1, 0, rest);
    }
    e.seq = seq;
  }

  /**
   * Makes the sent pending write `seq` unsent again, to be sent once more
   * (after a rate refusal: nothing of it applied). One that was dropped
   * from the view meanwhile is removed instead (`removed`).
   */
  unsend(seq: number): { write: PendingWrite; removed: boolean } {
    const i = this.find(seq, "resend");
    const e = this.entries[i]!;
    if (e.dropped) {
      this.entries.splice(i, 1);
      return { write: { ...e }, removed: true };
    }
    e.seq = undefined;
    return { write: { ...e }, removed: false };
  }

  /**
   * The connection dropped: forgets the writes that were sent and not
   * answered (the server may or may not have committed them), keeps the
   * unsent ones, and applies those again on top of the confirmed document.
   * Returns the forgotten writes that were still in the view.
   */
  dropSent(): DocumentUpdate & { forgotten: PendingWrite[] } {
    const forgotten = this.entries.filter((e) => e.seq !== undefined && !e.dropped).map((e) => ({ ...e }));
    const had = this.entries.length;
    this.entries = this.entries.filter((e) => e.seq === undefined);
    if (this.entries.length === had) return { changed: false, dropped: [], forgotten };
    return { ...this.rebase(), forgotten };
  }

  /** Removes the unsent pending writes of `writeId` (the rest of a split write whose part was refused). */
  cancel(writeId: number): DocumentUpdate & { cancelled: PendingWrite[] } {
    const cancelled = this.entries.filter((e) => e.writeId === writeId && e.seq === undefined);
    if (cancelled.length === 0) return { changed: false, dropped: [], cancelled: [] };
    this.entries = this.entries.filter((e) => !cancelled.includes(e));
    return { ...this.rebase(), cancelled: cancelled.map((e) => ({ ...e })) };
  }

  /** Removes every pending write (the connection closed for good); the view becomes the confirmed document. */
  clearPending(): DocumentUpdate & { removed: PendingWrite[] } {
    const removed = this.entries.map((e) => ({ ...e }));
    this.entries = [];
    return { ...this.rebase(), removed };
  }

  /**
   * The view again: the confirmed document with each pending write applied
   * in order. A write that no longer applies leaves the view: an unsent one
   * is removed, a sent one is marked dropped (its answer is still to come).
   */
  private rebase(): DocumentUpdate {
    if (!this._hydrated) return { changed: false, dropped: [] };
    const before = this._view;
    const dropped: DocumentUpdate["dropped"] = [];
    let view = this._confirmed;
    this.entries = this.entries.filter((e) => {
      if (e.dropped) return true;
      try {
        view = applyPatch(view, e.ops);
        return true;
      } catch (err) {
        if (e.seq !== undefined) e.dropped = true;
        dropped.push({ ...e, dropped: true, reason: (err as Error).message });
        return e.seq !== undefined;
      }
    });
    this._view = view;
    return { changed: view !== before, dropped };
  }
}
