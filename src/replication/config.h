// Replication settings of a shard kind: what the guest's
// tessera_replication_config() export returns (docs/guest-abi.md).
#ifndef TESSERA_REPLICATION_CONFIG_H_
#define TESSERA_REPLICATION_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::replication {

struct Config {
  // Quantisation step of positions, world units: q = llround(v / precision).
  double precision = 0.01;
  // Budget of each connection's `entities` payload; 0 means no budget.
  uint32_t max_bytes_per_tick = 0;
  // y is up (the ground plane is x, z); otherwise z is up.
  bool y_up = false;
};

// Parses `f64 precision, u32 max_bytes_per_tick, u8 flags` (little-endian,
// exactly 13 bytes). Refuses a precision that is not finite and > 0 and
// unknown flag bits.
Result<Config> ParseConfig(std::string_view bytes);

// The same layout (for tests and reference guests).
std::string EncodeConfig(const Config& config);

}  // namespace tessera::replication

#endif  // TESSERA_REPLICATION_CONFIG_H_
