/**
 * The close codes of protocol v1 (`docs/protocol.md`, "Closing"): their
 * names, which of them end a session for good, and
 * {@link ShardClosedError}, the error such a close leaves. Used by
 * `client.ts`, which re-exports the public part.
 *
 * @packageDocumentation
 */

/** Names of the close codes of protocol v1, by code. */
export const CloseCodeName: Readonly<Record<number, string>> = {
  1000: "normal",
  1001: "going_away",
  1006: "connection_lost",
  1008: "too_slow",
  1009: "message_too_big",
  4000: "bad_frame",
  4001: "ticket_invalid",
  4002: "ticket_expired",
  4003: "ticket_wrong_shard",
  4004: "shard_not_found",
  4005: "kicked",
  4006: "shard_stopped",
  4007: "rate_limited",
  4008: "hello_timeout",
  4009: "unsupported_version",
  4010: "hello_expected",
  4011: "transferred",
  4015: "unresponsive",
};

/** Close codes after which the client never reconnects: the client itself is at fault. */
export const CLIENT_BUG_CODES = new Set([1009, 4000, 4009, 4010]);
/** Close codes that refuse the ticket: worth one fresh ticket, then fatal. */
export const TICKET_CODES = new Set([4001, 4002, 4003]);

/**
 * Why a connection closed for good: the server refused the ticket, kicked the
 * subscriber, stopped the shard, or the client broke the protocol.
 * `message` names the close code and the server's reason.
 */
export class ShardClosedError extends Error {
  /** The WebSocket close code (see `docs/protocol.md`, "Closing"). */
  readonly code: number;
  /** The close code's name, e.g. `"ticket_invalid"`. */
  readonly codeName: string;
  /** The server's reason text. */
  readonly reason: string;
  /** The shard the connection was for. */
  readonly shardId: string;

  constructor(shardId: string, code: number, reason: string, what: string) {
    const name = CloseCodeName[code] ?? "unknown";
    super(`tessera: ${what} (shard "${shardId}", close ${code} ${name}${reason ? `: ${reason}` : ""})`);
    this.name = "ShardClosedError";
    this.code = code;
    this.codeName = name;
    this.reason = reason;
    this.shardId = shardId;
  }
}

/** What a close code means, for {@link ShardClosedError}'s message. */
export function describeClose(code: number): string {
  if (TICKET_CODES.has(code)) return "the server refused the ticket";
  switch (code) {
    case 4004:
      return "the shard does not exist";
    case 4005:
      return "this subscriber was kicked";
    case 4006:
      return "the shard stopped";
    case 4009:
      return "the server does not speak this protocol version";
    case 4011:
      return "the player moved to another shard";
    default:
      return CLIENT_BUG_CODES.has(code)
        ? "the server closed the connection because of a client error"
        : "the connection closed";
  }
}
