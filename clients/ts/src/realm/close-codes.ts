/**
 * The close codes of realm connections (`docs/protocol.md` "Realms",
 * "Closing"): their names, which of them `connectRealm` retries, and
 * {@link RealmClosedError}, the error a final close leaves.
 *
 * @packageDocumentation
 */

/** Names of the close codes a realm connection can see, by code. */
export const RealmCloseCodeName: Readonly<Record<number, string>> = {
  1000: "normal",
  1001: "going_away",
  1006: "connection_lost",
  1008: "too_slow",
  1009: "message_too_big",
  1011: "internal_error",
  4000: "bad_frame",
  4001: "ticket_invalid",
  4002: "ticket_expired",
  4003: "ticket_wrong_resource",
  4004: "realm_not_found",
  4005: "kicked",
  4006: "stopped",
  4008: "hello_timeout",
  4009: "unsupported_version",
  4010: "hello_expected",
  4012: "insufficient_security",
  4013: "limits_exceeded",
  4014: "realm_unavailable",
};

/**
 * Close codes after which a realm connection never reconnects: the ticket
 * is refused for good, the realm does not exist, the client broke the
 * protocol or its limits, or the connection is below the realm's security.
 * 4002 (ticket expired) is not here: with a ticket function it is retried
 * once with a fresh ticket.
 */
export const REALM_FATAL_CODES: ReadonlySet<number> = new Set([
  1009, 4000, 4001, 4003, 4004, 4005, 4006, 4009, 4010, 4012, 4013,
]);

/** What a close code means, for {@link RealmClosedError}'s message. */
export function describeRealmClose(code: number): string {
  switch (code) {
    case 4001:
    case 4002:
    case 4003:
      return "the server refused the ticket";
    case 4004:
      return "the realm does not exist (unknown kind, or a key outside the allowed form)";
    case 4009:
      return "the server does not speak this protocol version";
    case 4012:
      return "the connection is below the realm's security floor (it needs TLS)";
    case 4013:
      return "the connection broke the realm's ingress limits too often";
    case 4014:
      return "the realm is unavailable";
    case 1009:
    case 4000:
    case 4010:
      return "the server closed the connection because of a client error";
    default:
      return "the connection closed";
  }
}

/**
 * Why a realm connection closed for good. `message` names the realm, the
 * close code and the server's reason.
 */
export class RealmClosedError extends Error {
  /** The WebSocket close code. */
  readonly code: number;
  /** The close code's name, e.g. `"ticket_invalid"`. */
  readonly codeName: string;
  /** The server's reason text. */
  readonly reason: string;
  /** The realm kind. */
  readonly kind: string;
  /** The realm instance's key. */
  readonly key: string;

  constructor(kind: string, key: string, code: number, reason: string, what: string) {
    const name = RealmCloseCodeName[code] ?? "unknown";
    super(`tessera: ${what} (realm "${kind}/${key}", close ${code} ${name}${reason ? `: ${reason}` : ""})`);
    this.name = "RealmClosedError";
    this.code = code;
    this.codeName = name;
    this.reason = reason;
    this.kind = kind;
    this.key = key;
  }
}
