#include "shard/lag_compensation.h"

#include <algorithm>

#include "replication/bit_io.h"
#include "shard/guest_shard.h"
#include "tessera/abi.h"

namespace tessera::shard {

Result<LagCompensationConfig> ParseLagCompensation(std::string_view bytes) {
  constexpr size_t kSize = 4 + 4;
  if (bytes.size() != kSize) {
    return InvalidArgument(
        "lag compensation config must be 8 bytes (u32 history_ticks, u32 "
        "max_view_delay_ms), got " +
        std::to_string(bytes.size()));
  }
  replication::ByteReader r(bytes);
  LagCompensationConfig c;
  r.U32(&c.history_ticks);
  r.U32(&c.max_view_delay_ms);
  if (c.history_ticks < 1 || c.history_ticks > abi::kMaxHistoryTicks) {
    return InvalidArgument(
        "lag compensation config: history_ticks must be 1.." +
        std::to_string(abi::kMaxHistoryTicks) + ", got " +
        std::to_string(c.history_ticks));
  }
  if (c.max_view_delay_ms == 0)
    c.max_view_delay_ms = abi::kDefaultMaxViewDelayMs;
  return c;
}

Result<std::optional<LagCompensationConfig>> ReadLagCompensation(
    GuestShard& guest, bool replication) {
  if (!guest.has_hook(Hook::kLagCompensation)) {
    return std::optional<LagCompensationConfig>();
  }
  Result<HookOutput> out = guest.CallHook(Hook::kLagCompensation);
  if (!out.ok()) return out.status();
  if (out->code != abi::kOk) return std::optional<LagCompensationConfig>();
  Result<LagCompensationConfig> config = ParseLagCompensation(out->bytes);
  if (!config.ok()) {
    return guest.FailAbi("tessera_lag_compensation output: " +
                         config.status().message());
  }
  if (!replication) {
    return guest.FailAbi(
        "lag compensation needs replication: tessera_lag_compensation turned "
        "it on, but tessera_replication_config is not exported or returned "
        "kNoState (the history is what replication sent)");
  }
  if (!guest.has_apply_input_at()) {
    return guest.FailAbi(
        "lag compensation needs tessera_apply_input_at: "
        "tessera_lag_compensation turned it on, but the module exports no "
        "tessera_apply_input_at (i32 x6) -> i32 to receive inputs with their "
        "rewind");
  }
  return std::optional<LagCompensationConfig>(*config);
}

std::optional<double> MaxBackTicks(const LagCompensationConfig& config,
                                   std::optional<int64_t> rtt_us,
                                   uint32_t tick_rate) {
  if (!rtt_us || tick_rate == 0) return std::nullopt;
  const double rtt_ms =
      static_cast<double>(std::max<int64_t>(*rtt_us, 0)) / 1000.0;
  const double tick_ms = 1000.0 / static_cast<double>(tick_rate);
  return (rtt_ms + static_cast<double>(config.max_view_delay_ms)) / tick_ms;
}

std::string EncodeRewind(const replication::DrawnPicture& picture) {
  std::string out;
  out.reserve(8 + 8 + 4 + picture.entities.size() * 32);
  replication::PutF64(out, picture.view_tick);
  replication::PutU64(out, picture.now_tick);
  replication::PutU32(out, static_cast<uint32_t>(picture.entities.size()));
  for (const replication::DrawnEntity& e : picture.entities) {
    replication::PutU64(out, e.id);
    replication::PutF64(out, e.x);
    replication::PutF64(out, e.y);
    replication::PutF64(out, e.z);
  }
  return out;
}

}  // namespace tessera::shard
