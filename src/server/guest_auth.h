// Guest sign-in (docs/protocol.md "Guest sign-in"): POST /api/auth/guest
// answers {userId: "guest-<16 hex>", token, expires} with a fresh random
// user id and a player ticket for it, the same ticket POST
// /api/dev/player-token mints (resource kind "player", id "*"): the bearer
// token of POST /api/functions/<name> and of compute invokes, whose caller
// is then that user. Nothing is stored; the identity is the ticket.
//
// Served in dev mode, or when TESSERA_GUEST_AUTH=on (GuestAuthFromEnv).
// Each client address (HttpRequest::remote_address) may sign in `burst`
// times at once and `per_sec` times a second after that (a token bucket,
// net/rate_limiter.h); over that: 429 rate_limited with Retry-After.
//
// Threading: Handle from any thread (one mutex around the buckets).
#ifndef TESSERA_SERVER_GUEST_AUTH_H_
#define TESSERA_SERVER_GUEST_AUTH_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "net/http_types.h"
#include "net/rate_limiter.h"
#include "net/ticket.h"

namespace tessera::server {

// "on": serve guest sign-in outside dev mode too; "off" or unset: dev only.
inline constexpr char kEnvGuestAuth[] = "TESSERA_GUEST_AUTH";
// Sign-ins per second per client address (a burst of 100 times that);
// "0": no limit (load tests from one machine). Default 10.
inline constexpr char kEnvGuestAuthRate[] = "TESSERA_GUEST_AUTH_RATE";

struct GuestAuthOptions {
  std::string ticket_secret;
  int64_t ticket_ttl_secs = net::kDefaultTicketLifetimeSecs;
  // Per client address; per_sec 0: no limit.
  double per_sec = 10;
  double burst = 1000;
  // Null: the real ones. Not owned. `clock` times the buckets, `wall_clock`
  // the tickets' expiry.
  const Clock* clock = nullptr;
  const WallClock* wall_clock = nullptr;
};

// Whether to serve guest sign-in (dev mode, or TESSERA_GUEST_AUTH=on) and
// its rate (TESSERA_GUEST_AUTH_RATE) into `options`. Reads getenv: call
// before starting threads. nullopt: not served. Errors: kInvalidArgument
// naming the variable for a value other than on/off or a rate not in
// 0..100000.
Result<std::optional<GuestAuthOptions>> GuestAuthFromEnv(
    bool dev, GuestAuthOptions options);

// A player ticket for `user_id`: resource kind "player", id "*", expiring
// `ttl_secs` after `wall_clock`'s now.
net::Ticket PlayerTicket(std::string user_id, int64_t ttl_secs,
                         const WallClock& wall_clock);

class GuestAuth final : public net::HttpHandler {
 public:
  explicit GuestAuth(GuestAuthOptions options);

  // POST /api/auth/guest with an empty body or {}: 200 {userId, token,
  // expires}; 405 for another method, 400 for another body, 429 over the
  // address's rate, 500 when no random id can be had.
  net::HttpResponse Handle(const net::HttpRequest& request) override;

  // Client addresses with a bucket (tests: the table stays bounded).
  size_t tracked_addresses() const;

  // At most this many addresses are tracked; beyond, the least recently
  // seen one is forgotten (it starts again with a full bucket).
  static constexpr size_t kMaxAddresses = 4096;

 private:
  struct Entry {
    net::TokenBucket bucket;
    int64_t last_us;
  };
  // Takes a sign-in for `address`; false (and `*retry_secs`) when over.
  bool Admit(const std::string& address, int64_t* retry_secs);

  const GuestAuthOptions options_;
  const Clock& clock_;
  const WallClock& wall_clock_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> buckets_ GUARDED_BY(mu_);
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_GUEST_AUTH_H_
