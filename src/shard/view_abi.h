// The binary layouts of the interest hooks (docs/guest-abi.md, "Interest
// and replication"): encoders for what the host passes in, parsers with
// every length and value checked for what the guest returns. Pure; the
// guest's replication change list is parsed by replication::Mirror.
#ifndef TESSERA_SHARD_VIEW_ABI_H_
#define TESSERA_SHARD_VIEW_ABI_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "replication/change_list.h"

namespace tessera::shard {

// Ids crossing the ABI must be below 2^53 (JavaScript reads them exactly).
using replication::kMaxEntityId;

struct GuestInterestConfig {
  double cell_size = 0;
  double margin = 0;
  bool shared_snapshots = false;
};
struct GuestEntity {
  uint64_t id = 0;
  uint32_t generation = 0;
  float x = 0, y = 0;
};
struct GuestArea {
  float x = 0, y = 0, radius = 0;
};

// tessera_interest_config's output (17 bytes). Errors name the problem.
Result<GuestInterestConfig> ParseInterestConfig(std::string_view bytes);
// tessera_entities' output; ids unique and in range, positions finite.
Status ParseEntities(std::string_view bytes, std::vector<GuestEntity>& out);

// tessera_interest_areas' argument and output.
std::string EncodeSubscriberList(std::span<const std::string> subscribers);
Status ParseAreas(std::string_view bytes, size_t count,
                  std::vector<std::optional<GuestArea>>& out);

// tessera_filter's argument (candidates[i]: subscriber i's ids). Its output
// has interest::FilterBatch's bitmap layout and is copied in as is.
std::string EncodeFilterRequest(
    std::span<const std::string> subscribers,
    std::span<const std::span<const uint64_t>> candidates);

// tessera_snapshot_visible's argument.
std::string EncodeViewRequest(std::string_view subscriber,
                              std::span<const uint64_t> visible,
                              std::span<const uint64_t> entered,
                              std::span<const uint64_t> left);

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_VIEW_ABI_H_
