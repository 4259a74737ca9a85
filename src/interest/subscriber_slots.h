// Per-subscriber state of InterestManager (internal), found by subscriber
// id: where the visible set it had after its last committed Update is kept
// (InterestManager stores the sets back to back; each is a sparse bitmap of
// entity ranks of that Update: pairs (word index, 64 bits) for the non-zero
// words, ascending).
// When the subscribers come in the same order as last time (the usual
// case) no hash lookup is made.
#ifndef TESSERA_INTEREST_SUBSCRIBER_SLOTS_H_
#define TESSERA_INTEREST_SUBSCRIBER_SLOTS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "common/string_map.h"
#include "interest/interest_types.h"

namespace tessera::interest::internal {

class SubscriberSlots {
 public:
  // Sets slots[i] to subscriber i's slot, creating empty ones for new ids.
  // Fails (InvalidArgument) when an id is listed twice.
  Status Resolve(std::span<const Subscriber> subscribers,
                 std::vector<uint32_t>& slots);

  struct Extent {
    size_t offset = 0;
    size_t size = 0;
  };
  Extent& visible(uint32_t slot) { return slots_[slot].visible; }

  // Forgets every subscriber that was not in the last Resolve() and
  // remembers its order.
  void Commit(std::span<const uint32_t> slots);
  void Clear();
  size_t size() const { return index_.size(); }

 private:
  struct Slot {
    std::string id;
    Extent visible;
    uint64_t epoch = 0;  // the last Resolve() that listed it
    bool live = false;
  };
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  StringMap<uint32_t> index_;
  std::vector<uint32_t> last_order_;
  uint64_t epoch_ = 0;
};

}  // namespace tessera::interest::internal

#endif  // TESSERA_INTEREST_SUBSCRIBER_SLOTS_H_
