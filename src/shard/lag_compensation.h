// Lag compensation on the host side of the guest ABI (docs/guest-abi.md,
// "Lag compensation"): the module's config, the view-tick clamp bound that a
// connection's round trip explains, and the Rewind layout passed to
// tessera_apply_input_at. SubscriberFrames owns the history these draw from.
#ifndef TESSERA_SHARD_LAG_COMPENSATION_H_
#define TESSERA_SHARD_LAG_COMPENSATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "replication/sent_history.h"

namespace tessera::shard {

class GuestShard;

struct LagCompensationConfig {
  uint32_t history_ticks = 0;      // 1..abi::kMaxHistoryTicks
  uint32_t max_view_delay_ms = 0;  // never 0 here: 0 reads as the default
};

// Parses tessera_lag_compensation's kOk output: `u32 history_ticks, u32
// max_view_delay_ms` (little-endian, exactly 8 bytes). Refuses another size
// and a history_ticks outside 1..abi::kMaxHistoryTicks; a max_view_delay_ms
// of 0 becomes abi::kDefaultMaxViewDelayMs.
Result<LagCompensationConfig> ParseLagCompensation(std::string_view bytes);

// Calls tessera_lag_compensation when the module exports it (right after
// init or restore). nullopt when it is absent or returns kNoState. A config
// the host refuses, or one turned on without replication (`replication`
// false) or without tessera_apply_input_at, fails the shard with an "abi:
// ..." line, returned as the error (as is a failure of the call itself).
Result<std::optional<LagCompensationConfig>> ReadLagCompensation(
    GuestShard& guest, bool replication);

// How many ticks before the newest one a view tick may reach given the
// connection's round trip: (rtt_ms + max_view_delay_ms) / tick_ms with
// tick_ms = 1000 / tick_rate, in doubles (no rounding). nullopt while the
// round trip is unknown (only history_ticks bounds it then). A negative
// round trip counts as 0.
std::optional<double> MaxBackTicks(const LagCompensationConfig& config,
                                   std::optional<int64_t> rtt_us,
                                   uint32_t tick_rate);

// The Rewind layout: `f64 view_tick, u64 now_tick, u32 count`, then count x
// `u64 id, f64 x, f64 y, f64 z` (little-endian, no padding), entities in the
// picture's order (ascending id).
std::string EncodeRewind(const replication::DrawnPicture& picture);

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_LAG_COMPENSATION_H_
