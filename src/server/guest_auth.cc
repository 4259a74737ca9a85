#include "server/guest_auth.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "server/env_config.h"
#include "server/http_json.h"
#include "server/random_token.h"

namespace tessera::server {

using json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

Result<std::optional<GuestAuthOptions>> GuestAuthFromEnv(
    bool dev, GuestAuthOptions options) {
  bool on = dev;
  if (std::optional<std::string> v = EnvString(kEnvGuestAuth)) {
    if (*v == "on") {
      on = true;
    } else if (*v != "off") {
      return InvalidArgument(std::string(kEnvGuestAuth) +
                             " must be \"on\" or \"off\", got \"" + *v + "\"");
    }
  }
  if (std::optional<std::string> v = EnvString(kEnvGuestAuthRate)) {
    int64_t rate = -1;
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), rate);
    if (ec != std::errc() || end != v->data() + v->size() || rate < 0 ||
        rate > 100000) {
      return InvalidArgument(std::string(kEnvGuestAuthRate) +
                             " must be an integer in 0..100000 (sign-ins "
                             "per second per address; 0: no limit), got \"" +
                             *v + "\"");
    }
    options.per_sec = static_cast<double>(rate);
    options.burst = static_cast<double>(rate) * 100;
  }
  if (!on) return std::optional<GuestAuthOptions>();
  return std::optional<GuestAuthOptions>(std::move(options));
}

net::Ticket PlayerTicket(std::string user_id, int64_t ttl_secs,
                         const WallClock& wall_clock) {
  net::Ticket ticket;
  ticket.resource_kind = "player";
  ticket.resource_id = "*";
  ticket.subscriber_id = std::move(user_id);
  ticket.expires_unix = wall_clock.UnixNowSecs() + ttl_secs;
  return ticket;
}

GuestAuth::GuestAuth(GuestAuthOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : *RealClock::Get()),
      wall_clock_(options_.wall_clock != nullptr ? *options_.wall_clock
                                                 : *RealWallClock::Get()) {}

size_t GuestAuth::tracked_addresses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return buckets_.size();
}

bool GuestAuth::Admit(const std::string& address, int64_t* retry_secs) {
  if (options_.per_sec <= 0) return true;
  const int64_t now = clock_.NowUs();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = buckets_.find(address);
  if (it == buckets_.end()) {
    if (buckets_.size() >= kMaxAddresses) {
      // Forget the buckets that have filled up again (as good as new),
      // then, if none had, the least recently seen one.
      const double full_us = options_.burst / options_.per_sec * 1e6;
      for (auto b = buckets_.begin(); b != buckets_.end();) {
        if (static_cast<double>(now - b->second.last_us) >= full_us) {
          b = buckets_.erase(b);
        } else {
          ++b;
        }
      }
      if (buckets_.size() >= kMaxAddresses) {
        auto oldest = buckets_.begin();
        for (auto b = buckets_.begin(); b != buckets_.end(); ++b) {
          if (b->second.last_us < oldest->second.last_us) oldest = b;
        }
        buckets_.erase(oldest);
      }
    }
    it = buckets_
             .emplace(address, Entry{net::TokenBucket(options_.per_sec,
                                                      options_.burst, now),
                                     now})
             .first;
  }
  it->second.last_us = now;
  if (it->second.bucket.TryTake(now)) return true;
  const double missing = 1.0 - it->second.bucket.tokens();
  *retry_secs = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(missing / options_.per_sec)));
  return false;
}

HttpResponse GuestAuth::Handle(const HttpRequest& request) {
  if (request.method != "POST") {
    HttpResponse r =
        ErrorResponse(405, "method_not_allowed",
                      request.method + " is not allowed here (allowed: POST)");
    r.headers.emplace_back("Allow", "POST");
    return r;
  }
  const json body =
      request.body.find_first_not_of(" \t\r\n") == std::string::npos
          ? json::object()
          : json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return ErrorResponse(400, "bad_json",
                         "the body must be empty or a JSON object");
  }
  if (!body.empty()) {
    return ErrorResponse(
        400, "invalid_argument",
        "the body takes no fields (got \"" + body.begin().key() + "\")");
  }
  int64_t retry_secs = 0;
  if (!Admit(request.remote_address, &retry_secs)) {
    HttpResponse r = ErrorResponse(
        429, "rate_limited",
        "too many guest sign-ins from " + request.remote_address +
            "; try again in " + std::to_string(retry_secs) + " s");
    r.headers.emplace_back("Retry-After", std::to_string(retry_secs));
    return r;
  }
  Result<std::string> id = RandomHex(8);
  if (!id.ok()) return ErrorFromStatus(id.status());
  const net::Ticket ticket =
      PlayerTicket("guest-" + *id, options_.ticket_ttl_secs, wall_clock_);
  return JsonResponse(
      200, json{{"userId", ticket.subscriber_id},
                {"token",
                 net::MintTicket(options_.ticket_secret, ticket, &wall_clock_)},
                {"expires", ticket.expires_unix}});
}

}  // namespace tessera::server
