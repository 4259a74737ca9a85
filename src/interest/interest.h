// Interest management: each subscriber (player) is sent only the entities
// near it.
//
// Every Update rebuilds a uniform grid from all entity positions (2D; a 3D
// world passes its ground plane) and, for each subscriber with an interest
// area (x, y, radius), finds the entities in range:
//  - an entity enters the view when its distance to the centre is <= radius;
//  - one the subscriber already sees stays until its distance is > radius +
//    margin (hysteresis: no flicker at the edge).
//  Distances are compared squared, in double precision.
// Then an optional visibility filter (stealth, fog of war) is called ONCE
// with every subscriber's candidates and may hide any of them; a hidden
// entity is not visible (it leaves if it was). The result per subscriber is
// a View: visible ids, and entered / left since its previous Update.
//
// An id whose generation changed since the previous Update was removed and
// reused: a subscriber that saw it and sees it again gets it in both `left`
// and `entered` (hysteresis does not carry over to the new entity). A
// subscriber missing from an Update is forgotten: next time it starts from
// an empty view.
//
// Cost per Update: O(entities) to rebuild the grid plus, per subscriber,
// the entities in the cells its circle reaches. Internal buffers and the
// views' vectors are reused and grow geometrically: after a warm-up an
// Update allocates only when some list outgrows every earlier size. Not
// thread-safe.
#ifndef TESSERA_INTEREST_INTEREST_H_
#define TESSERA_INTEREST_INTEREST_H_

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "common/status.h"
#include "interest/filter_batch.h"
#include "interest/group.h"
#include "interest/interest_types.h"

namespace tessera::interest {

namespace internal {
class Engine;
}  // namespace internal

class InterestManager {
 public:
  // InvalidArgument when `config` is not valid (see ValidateConfig).
  static Result<InterestManager> Create(Config config);

  InterestManager(InterestManager&&) noexcept;
  InterestManager& operator=(InterestManager&&) noexcept;
  ~InterestManager();

  // Computes every subscriber's view of `entities`: views is resized to
  // subscribers.size() and views[i] is subscribers[i]'s (the vectors' memory
  // is reused). `filter` may be null.
  //
  // Fails with InvalidArgument on a repeated entity or subscriber id, a
  // non-finite entity position or area, or a negative radius; and with the
  // filter's Status when it fails. After a failure `views` is unspecified
  // and the manager is as before the call (the next Update compares with
  // the last successful one).
  Status Update(std::span<const EntityPos> entities,
                std::span<const Subscriber> subscribers, const Filter* filter,
                std::vector<View>& views);

  // Forgets every subscriber and the previous entities.
  void Reset();

  const Config& config() const;
  // Subscribers remembered from the last successful Update.
  size_t subscriber_count() const;

 private:
  explicit InterestManager(Config config);

  std::unique_ptr<internal::Engine> engine_;
};

}  // namespace tessera::interest

#endif  // TESSERA_INTEREST_INTEREST_H_
