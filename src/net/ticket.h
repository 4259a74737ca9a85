// Tickets (docs/protocol.md "Tickets"): HMAC-SHA256-signed grants to join
// one resource (a shard now; realms and other kinds later) as one
// subscriber until an expiry.
#ifndef TESSERA_NET_TICKET_H_
#define TESSERA_NET_TICKET_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace tessera::net {

inline constexpr int64_t kDefaultTicketLifetimeSecs = 600;

// The kind of resource a shard is. Shard tickets keep the format tickets had
// before they named a kind, so tickets minted then still verify.
inline constexpr std::string_view kShardResource = "shard";

struct Ticket {
  std::string resource_id;  // e.g. the shard id
  std::string subscriber_id;
  int64_t expires_unix = 0;        // seconds
  std::string claims_json = "{}";  // a JSON object, application-defined
  // What kind of resource `resource_id` names (not empty).
  std::string resource_kind = std::string(kShardResource);
  // When it was minted (unix milliseconds, payload "i"); 0 when the ticket
  // has none (minted before tickets were dated). A source shard compares it
  // with when a player left (docs/protocol.md "Moving between shards").
  int64_t issued_unix_ms = 0;
};

// Signs `ticket` with `secret`. `claims_json` must be a JSON object. The
// payload's "i" is always `clock`'s time now (null: RealWallClock), not
// `ticket.issued_unix_ms`: a minted ticket is issued when it is minted.
std::string MintTicket(std::string_view secret, const Ticket& ticket,
                       const WallClock* clock = nullptr);

enum class TicketError {
  kNone,
  kInvalid,
  kExpired,
  kWrongResource,  // valid, but for another resource (or kind)
  kWrongShard = kWrongResource,
};

struct TicketCheck {
  TicketError error = TicketError::kNone;
  std::string message;  // for the close reason
  Ticket ticket;        // filled when error == kNone
};

// Verifies the signature in constant time, then the payload, then expiry
// (against `now_unix`) and that the ticket is for the resource `id` of
// kind `kind`.
TicketCheck VerifyTicket(std::string_view secret, std::string_view text,
                         std::string_view kind, std::string_view id,
                         int64_t now_unix);
// The signature, the payload and expiry only: a ticket of any resource
// (the compute API identifies a player by one, docs/compute.md).
TicketCheck VerifyTicketAnyResource(std::string_view secret,
                                    std::string_view text, int64_t now_unix);
// The same for the shard `shard_id`.
TicketCheck VerifyTicket(std::string_view secret, std::string_view text,
                         std::string_view shard_id, int64_t now_unix);

}  // namespace tessera::net

#endif  // TESSERA_NET_TICKET_H_
