// Plain types of the interest grid (see interest/interest.h).
#ifndef TESSERA_INTEREST_INTEREST_TYPES_H_
#define TESSERA_INTEREST_INTEREST_TYPES_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::interest {

struct Config {
  // Side of a grid cell in world units: > 0 and finite. About the usual
  // interest radius is a good value.
  float cell_size = 100;
  // Hysteresis in world units: >= 0 and finite. An entity enters a view at
  // distance <= radius and leaves it at distance > radius + margin.
  float margin = 0;
};

// InvalidArgument unless `config` is as documented above.
Status ValidateConfig(const Config& config);

// One entity on the ground plane. Ids are unique within one Update. A
// generation that differs from the one the id had at the previous Update
// means the id was removed and reused.
struct EntityPos {
  uint64_t id = 0;
  uint32_t generation = 0;
  float x = 0;
  float y = 0;
};

// A subscriber's interest circle.
struct Area {
  float x = 0;
  float y = 0;
  float radius = 0;  // finite, >= 0
};

// A subscriber (player) and its interest area; no area: it sees nothing.
// `id` only has to stay valid during the Update it is passed to.
struct Subscriber {
  std::string_view id;
  std::optional<Area> area;
};

// What one subscriber sees after an Update, and how that changed since the
// subscriber's previous Update. All three lists are ascending ids.
struct View {
  std::vector<uint64_t> visible;
  std::vector<uint64_t> entered;
  std::vector<uint64_t> left;
};

}  // namespace tessera::interest

#endif  // TESSERA_INTEREST_INTEREST_TYPES_H_
