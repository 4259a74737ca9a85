// A WebSocket double driven by the test: the test plays the server.
import {
  type ClientMessage,
  decodeClientMessage,
  encodeServerMessage,
  type ServerMessage,
} from "../../src/protocol.js";
import type { WebSocketConstructor, WebSocketLike } from "../../src/client.js";

export class FakeSocket implements WebSocketLike {
  binaryType = "blob";
  readyState = 0;
  protocol = "";
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  readonly sent: Uint8Array[] = [];
  closedByClient: { code?: number; reason?: string } | undefined;

  constructor(
    readonly url: string,
    readonly protocols?: string | string[],
  ) {}

  send(data: Uint8Array): void {
    if (this.readyState !== 1) throw new Error("send on a socket that is not open");
    this.sent.push(data);
  }
  close(code?: number, reason?: string): void {
    this.closedByClient = { code, reason };
    this.readyState = 3;
  }

  // -- the server side --
  /** Decoded messages the client sent. */
  messages(): ClientMessage[] {
    return this.sent.map((b) => decodeClientMessage(b));
  }
  accept(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
  push(msg: ServerMessage): void {
    this.pushRaw(encodeServerMessage(msg));
  }
  pushRaw(bytes: Uint8Array | string): void {
    const data = typeof bytes === "string" ? bytes : bytes.slice().buffer;
    this.onmessage?.({ data });
  }
  /** The shard id in the socket's URL (`/shard/<id>`, percent-decoded). */
  get shardId(): string {
    return decodeURIComponent(this.url.slice(this.url.lastIndexOf("/shard/") + "/shard/".length));
  }
  /**
   * Sends WELCOME for the shard of the URL; `flags` are the HELLO flags it
   * says it honours (default: none, an older server).
   */
  welcome(codec: "msgpack" | "json" = "msgpack", subscriberId = "ann", tick = 100, flags = 0): void {
    this.push({ type: 16, shardId: this.shardId, subscriberId, tickRate: 20, codec, tick, flags });
  }
  /** What the server does when the player moved: TRANSFER, then close 4011. */
  transfer(to: string, ticket: string): void {
    this.push({ type: 20, shardId: to, ticket });
    this.serverClose(4011, `moved to shard ${to}`);
  }
  /** Opens the socket and sends WELCOME. */
  acceptAndWelcome(codec: "msgpack" | "json" = "msgpack", flags = 0): void {
    this.accept();
    this.welcome(codec, "ann", 100, flags);
  }
  serverClose(code: number, reason = ""): void {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

export function fakeWebSocket(): { WebSocket: WebSocketConstructor; sockets: FakeSocket[]; last(): FakeSocket } {
  const sockets: FakeSocket[] = [];
  class Ctor extends FakeSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      sockets.push(this);
    }
  }
  return {
    WebSocket: Ctor,
    sockets,
    last() {
      const s = sockets[sockets.length - 1];
      if (!s) throw new Error("no socket was opened");
      return s;
    },
  };
}
