/**
 * Client-side prediction: replay the inputs the shard has not applied yet on
 * top of the last state it sent.
 *
 * @module
 */

/**
 * Advances a predicted state by one input. Must be pure (no side effects):
 * it runs again for the same input after every frame until the shard has
 * applied that input.
 */
export type StepFunction<State, Input> = (state: State, input: Input) => State;

/** An input sent and not yet known to be applied or refused. */
export interface PendingInput<Input> {
  /** The INPUT's seq on its connection. */
  readonly seq: number;
  /** The input as given to `send`. */
  readonly input: Input;
}

/**
 * Records each input sent and replays the ones the shard has not applied
 * on top of the shard's state. Get one from `ShardGame.predict(step)`: the
 * game records sends, drops refused inputs and clears it on reconnect.
 */
export class Predictor<State, Input> {
  private queue: PendingInput<Input>[] = [];
  private lastState: State | undefined;

  /** @param step applies one input to a state (pure) */
  constructor(private readonly step: StepFunction<State, Input>) {}

  /** Inputs sent and not yet dropped, oldest first. */
  get pending(): readonly PendingInput<Input>[] {
    return this.queue;
  }

  /** The state returned by the last {@link reconcile}, or `undefined`. */
  get state(): State | undefined {
    return this.lastState;
  }

  /**
   * Records an input that was sent with `seq` (done by the game's `send`).
   *
   * @param seq the INPUT's seq (increasing)
   * @param input the input
   */
  record(seq: number, input: Input): void {
    this.queue.push({ seq, input });
  }

  /**
   * Drops input `seq` because the shard refused it (REJECT): its effect must
   * not be predicted.
   *
   * @param seq the refused input's seq
   */
  refuse(seq: number): void {
    const i = this.queue.findIndex((p) => p.seq === seq);
    if (i >= 0) this.queue.splice(i, 1);
  }

  /**
   * Starts from the shard's state for your entity and replays every
   * recorded input with a seq above `ack`, oldest first. Inputs with a seq
   * at or below `ack` are dropped (the state already includes them).
   *
   * @param serverState the shard's state for your entity (from the latest frame)
   * @param ack the highest seq that state includes (the FRAME's `last_seq`)
   * @returns the predicted state
   */
  reconcile(serverState: State, ack: number): State {
    let i = 0;
    while (i < this.queue.length && this.queue[i]!.seq <= ack) i++;
    if (i > 0) this.queue.splice(0, i);
    let state = serverState;
    for (const p of this.queue) state = this.step(state, p.input);
    this.lastState = state;
    return state;
  }

  /** Forgets every recorded input and the last state (a new connection restarts seqs). */
  clear(): void {
    this.queue = [];
    this.lastState = undefined;
  }
}
