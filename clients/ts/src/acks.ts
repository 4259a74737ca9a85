/**
 * Which inputs sent on one socket still await their answer, for the "frame
 * acks" mode of protocol v1 (`docs/protocol.md`, HELLO flag bit 0): the
 * server then sends no ACK for an input a FRAME acknowledges, and a FRAME's
 * `last_seq` acknowledges every input up to it that was not refused.
 *
 * @packageDocumentation
 */

/**
 * The seqs sent on the current socket and not yet answered (ascending), and
 * which of them a FRAME acknowledges. Each seq is answered once: by an ACK
 * message, a REJECT, or (when the server honours frame acks, as its WELCOME
 * says) a FRAME whose `last_seq` reaches it.
 */
export class PendingAcks {
  private seqs: number[] = [];
  private frameAcks = false; // the server honours frame acks

  /** Seqs sent and not yet answered, oldest first. */
  get pending(): readonly number[] {
    return this.seqs;
  }

  /**
   * The socket's WELCOME arrived.
   *
   * @param frameAcks whether its flags say the server honours frame acks
   *   (otherwise every input gets an ACK or REJECT message)
   */
  welcome(frameAcks: boolean): void {
    this.frameAcks = frameAcks;
  }

  /**
   * Records an input sent on the socket.
   *
   * @param seq its seq (greater than every seq recorded before)
   */
  sent(seq: number): void {
    this.seqs.push(seq);
  }

  /**
   * An ACK or REJECT message for `seq` arrived.
   *
   * @param seq the seq it names
   * @returns true when `seq` was awaiting its answer (report it); false for
   *   a duplicate or an input not sent on this socket (ignore it)
   */
  answer(seq: number): boolean {
    const i = this.seqs.indexOf(seq);
    if (i < 0) return false;
    this.seqs.splice(i, 1);
    return true;
  }

  /**
   * A FRAME arrived; returns the seqs it acknowledges (to report as acks):
   * with frame acks, every pending seq up to its `last_seq` (the server sent
   * the REJECTs among them before it); otherwise none.
   *
   * @param lastSeq the FRAME's `last_seq`
   * @returns the seqs now acknowledged, ascending (no longer pending)
   */
  frame(lastSeq: number): number[] {
    if (!this.frameAcks) return [];
    let n = 0;
    while (n < this.seqs.length && this.seqs[n]! <= lastSeq) n++;
    return this.seqs.splice(0, n);
  }

  /** Forgets everything: the socket is gone (its inputs get no answer) or replaced. */
  reset(): void {
    this.seqs = [];
    this.frameAcks = false;
  }
}
