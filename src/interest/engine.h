// The engine behind InterestManager (internal; see interest/interest.h):
// all the state kept between Updates and the buffers reused by each one.
#ifndef TESSERA_INTEREST_ENGINE_H_
#define TESSERA_INTEREST_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "interest/entity_table.h"
#include "interest/filter_batch.h"
#include "interest/grid.h"
#include "interest/interest_types.h"
#include "interest/segments.h"
#include "interest/subscriber_slots.h"

namespace tessera::interest::internal {

class Engine {
 public:
  explicit Engine(Config config) : config_(config) {}

  // InterestManager::Update, Reset and subscriber_count (interest.h).
  Status Update(std::span<const EntityPos> entities,
                std::span<const Subscriber> subscribers, const Filter* filter,
                std::vector<View>& views);
  void Reset();
  size_t subscriber_count() const { return slots_.size(); }
  const Config& config() const { return config_; }

 private:
  // Sets `candidates` to one subscriber's candidates (ascending ids) and
  // appends the new state they make (see SubscriberSlots), the candidates
  // it did not see and the ids it saw that are not candidates any more
  // (dropped) to the segments below. In collect.cc.
  void Collect(const Subscriber& subscriber, std::span<const uint64_t> previous,
               std::vector<uint64_t>& candidates);
  // Sets in `now` the candidates among the points of runs_: within radius
  // of `area`, or within radius + margin if in `was`. Returns their number;
  // lists them (ranks) in hits_ when kListHits. In collect.cc.
  template <bool kListHits>
  size_t Mark(const Area& area, const uint64_t* was, uint64_t* now);
  // Completes subscriber i's `view` (whose visible holds the candidates)
  // and fixes its new state when `some_hidden` (the filter hid candidates
  // of it); returns the size of that state.
  size_t MakeView(size_t i, bool some_hidden, View& view);
  Segments& new_states() { return states_[1 - committed_]; }

  const Config config_;
  EntityTable entities_;
  Grid grid_;
  SubscriberSlots slots_;
  FilterBatch batch_;

  std::vector<uint32_t> sub_slots_;
  std::vector<Run> runs_;
  // Rank bitmaps of one subscriber's previously visible entities and
  // candidates; all zero between subscribers.
  std::vector<uint64_t> was_bits_;
  std::vector<uint64_t> cand_bits_;
  std::vector<uint32_t> was_words_;  // words of was_bits_ set (scratch)
  std::vector<uint32_t> hits_;       // scratch: candidate ranks, unsorted
  // Per subscriber (Collect's output).
  Segments entered_;  // candidates it did not see, ascending
  Segments dropped_;  // ids it saw, not candidates any more
  // The subscribers' states (see SubscriberSlots): the committed ones and
  // the new ones (before the filter hides candidates).
  Segments states_[2];
  int committed_ = 0;
};

}  // namespace tessera::interest::internal

#endif  // TESSERA_INTEREST_ENGINE_H_
