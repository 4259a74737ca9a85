// Ingress limits of a realm kind (docs/realms.md "Ingress limits"): what
// one client connection may send. A write frame over a limit is refused
// with kResourceExhausted ("limits_exceeded: <limit>: ..."), counted as a
// breach, and a connection with more than maxBreachesBeforeDetach breaches
// is detached.
//
// A kind's "limits" object may set any of the keys below, each a positive
// integer within [1, cap] (caps in kLimitCaps, documented in
// docs/realms.md); unknown keys are refused.
#ifndef TESSERA_REALM_LIMITS_H_
#define TESSERA_REALM_LIMITS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "realm/patch.h"

namespace tessera::realm {

struct RealmLimits {
  int64_t max_patches_per_frame = 64;   // ops in one write frame
  int64_t max_frame_bytes = 64 * 1024;  // encoded size of one frame
  int64_t max_record_key_length = 128;  // bytes of one path or object key
  int64_t max_expanded_leaves = 256;    // leaves one op's value holds
  int64_t write_rate_per_second = 100;  // token refill, frames per second
  int64_t write_rate_burst = 200;       // token bucket size, frames
  int64_t max_breaches_before_detach = 10;

  // What a patch decoder should enforce for these limits.
  DecodeLimits ToDecodeLimits() const {
    DecodeLimits d;
    d.max_ops = static_cast<size_t>(max_patches_per_frame);
    d.max_bytes = static_cast<size_t>(max_frame_bytes);
    d.max_key_length = static_cast<size_t>(max_record_key_length);
    d.max_expanded_leaves = static_cast<size_t>(max_expanded_leaves);
    return d;
  }
  bool operator==(const RealmLimits&) const = default;
};

// The largest value a kind may give each limit.
struct LimitCaps {
  int64_t max_patches_per_frame = 4096;
  int64_t max_frame_bytes = 4 * 1024 * 1024;
  int64_t max_record_key_length = 1024;
  int64_t max_expanded_leaves = 65536;
  int64_t write_rate_per_second = 10000;
  int64_t write_rate_burst = 20000;
  int64_t max_breaches_before_detach = 1000;
};
inline constexpr LimitCaps kLimitCaps{};

// Parses a kind's "limits" object over the defaults. `where` prefixes
// messages ("app/tessera.json: realms[0].limits"). Errors:
// kInvalidArgument naming the key (unknown, not an integer, out of range).
Result<RealmLimits> ParseRealmLimits(const Json& limits,
                                     std::string_view where);

// The limits a client needs to stay inside them, for the hydrate:
// {"maxPatchesPerFrame", "maxFrameBytes", "maxRecordKeyLength",
//  "maxExpandedLeaves", "writeRatePerSecond", "writeRateBurst"}.
Json AdvertisedLimits(const RealmLimits& limits);

// One connection's ingress state: the write token bucket (one token per
// admitted frame, starting full) and the breach count. Time is passed in;
// a clock going backwards refills nothing. Not thread-safe: owned by the
// connection's session, called on its thread.
class ConnectionIngress {
 public:
  explicit ConnectionIngress(const RealmLimits& limits) : limits_(limits) {}

  // Admits one decoded write frame of `frame_bytes` encoded bytes at
  // `now_us`, taking a token. Errors: kResourceExhausted, message
  // "limits_exceeded: <limit name>: ..." (the rate refusal says how long
  // to wait); each refusal is a breach and takes no token.
  Status Admit(size_t frame_bytes, const Patch& patch, int64_t now_us);

  int64_t breaches() const { return breaches_; }
  // True once breaches exceed max_breaches_before_detach: the session
  // must detach the connection.
  bool should_detach() const {
    return breaches_ > limits_.max_breaches_before_detach;
  }

 private:
  Status Breach(std::string message);
  void Refill(int64_t now_us);

  RealmLimits limits_;
  // Tokens in millionths, so that refill is exact integer arithmetic.
  std::optional<int64_t> last_us_;
  int64_t micro_tokens_ = 0;
  int64_t breaches_ = 0;
};

}  // namespace tessera::realm

#endif  // TESSERA_REALM_LIMITS_H_
