// Tickets (docs/protocol.md "Tickets"): HMAC-SHA256-signed grants to join
// one shard as one subscriber until an expiry.
#ifndef TESSERA_NET_TICKET_H_
#define TESSERA_NET_TICKET_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::net {

inline constexpr int64_t kDefaultTicketLifetimeSecs = 600;

struct Ticket {
  std::string shard_id;
  std::string subscriber_id;
  int64_t expires_unix = 0;        // seconds
  std::string claims_json = "{}";  // a JSON object, application-defined
};

// Signs `ticket` with `secret`. `claims_json` must be a JSON object.
std::string MintTicket(std::string_view secret, const Ticket& ticket);

enum class TicketError { kNone, kInvalid, kExpired, kWrongShard };

struct TicketCheck {
  TicketError error = TicketError::kNone;
  std::string message;  // for the close reason
  Ticket ticket;        // filled when error == kNone
};

// Verifies the signature in constant time, then the payload, then expiry
// (against `now_unix`) and that the ticket is for `shard_id`.
TicketCheck VerifyTicket(std::string_view secret, std::string_view text,
                         std::string_view shard_id, int64_t now_unix);

}  // namespace tessera::net

#endif  // TESSERA_NET_TICKET_H_
