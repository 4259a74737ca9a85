// The entities of one Update ordered by id (internal to InterestManager):
// an entity's rank is its index in id order, so ascending ranks are
// ascending ids. Also maps the ranks of the last committed tick to the
// current ones, which tells which entities are gone or reused.
#ifndef TESSERA_INTEREST_ENTITY_TABLE_H_
#define TESSERA_INTEREST_ENTITY_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "interest/interest_types.h"

namespace tessera::interest::internal {

class EntityTable {
 public:
  // Orders `entities` by id. Fails (InvalidArgument) on a repeated id, a
  // non-finite position or 2^31 entities or more; the table is then
  // unusable until the next successful Load, but what Commit() saved stays.
  Status Load(std::span<const EntityPos> entities);

  size_t size() const { return ids_.size(); }
  // By rank.
  std::span<const uint64_t> ids() const { return ids_; }
  std::span<const float> xs() const { return xs_; }
  std::span<const float> ys() const { return ys_; }
  // The same entities (ids and generations) as the last committed tick:
  // ranks then and now are the same.
  bool same_as_previous() const { return same_as_previous_; }
  // The entities of the last committed tick, by their rank then: their ids,
  // and (only when !same_as_previous()) remap()[rank then] = the same
  // entity's rank now, or kGone when the id is no longer listed or was
  // reused (another generation).
  static constexpr uint32_t kGone = 0xffffffffu;
  std::span<const uint64_t> previous_ids() const { return prev_ids_; }
  std::span<const uint32_t> remap() const { return remap_; }

  // Makes the loaded entities the reference for the next Load's remap().
  void Commit();
  // Forgets the committed tick.
  void Clear();

 private:
  bool OrderAscending(std::span<const EntityPos> entities) const;
  void SortOrder(std::span<const EntityPos> entities);

  std::vector<uint32_t> order_;  // rank -> index in the input
  std::vector<uint32_t> order_tmp_;
  std::vector<uint64_t> ids_;
  std::vector<uint32_t> gens_;
  std::vector<float> xs_, ys_;
  std::vector<uint32_t> remap_;
  bool same_as_previous_ = false;
  std::vector<uint64_t> prev_ids_;
  std::vector<uint32_t> prev_gens_;
};

}  // namespace tessera::interest::internal

#endif  // TESSERA_INTEREST_ENTITY_TABLE_H_
