// The visibility filter's batch: every subscriber's in-range candidates and
// one keep bitmap per subscriber, filled by InterestManager and handed to
// the filter once per Update.
//
// The keep bitmap of a subscriber with n candidates is (n + 7) / 8 bytes;
// bit j % 8 of byte j / 8 is set when the subscriber may see candidate j.
// All bitmaps start with every candidate kept, and are stored back to back
// in subscriber order: exactly the output layout of the guest's
// `tessera_filter` (docs/guest-abi.md), so a host can copy that output into
// all_keep_bits() as is. Bits past a subscriber's n are ignored.
#ifndef TESSERA_INTEREST_FILTER_BATCH_H_
#define TESSERA_INTEREST_FILTER_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "common/status.h"
#include "interest/interest_types.h"

namespace tessera::interest {

namespace internal {
class Engine;
}  // namespace internal

class FilterBatch {
 public:
  // Number of subscribers (the same order as the Update's subscribers).
  size_t size() const { return views_.size(); }

  // Subscriber i's candidates: ascending ids within radius (or within
  // radius + margin for those it already saw).
  std::span<const uint64_t> candidates(size_t i) const {
    return views_[i].visible;
  }
  // Subscriber i's keep bitmap ((candidates(i).size() + 7) / 8 bytes).
  std::span<uint8_t> keep_bits(size_t i) {
    return {keep_.data() + keep_offsets_[i],
            keep_offsets_[i + 1] - keep_offsets_[i]};
  }
  bool kept(size_t i, size_t j) const {
    return (keep_[keep_offsets_[i] + j / 8] >> (j % 8)) & 1;
  }
  // Subscriber i may not see candidate j.
  void Hide(size_t i, size_t j) {
    keep_[keep_offsets_[i] + j / 8] &= static_cast<uint8_t>(~(1u << (j % 8)));
  }

  // Every keep bitmap, back to back in subscriber order.
  std::span<uint8_t> all_keep_bits() { return keep_; }

 private:
  friend class internal::Engine;

  // Takes the candidates from the views' visible lists (which must outlive
  // the batch's use) and keeps every one.
  void Reset(std::span<const View> views);
  // Whether subscriber i keeps all its candidates.
  bool KeepsAll(size_t i) const;

  std::span<const View> views_;
  std::vector<uint8_t> keep_;
  std::vector<size_t> keep_offsets_{0};
};

// The visibility filter: called once per Update with all subscribers (the
// Update's order) and their candidates; clears keep bits to hide entities.
// A non-OK Status fails the Update.
using Filter = std::function<Status(std::span<const Subscriber> subscribers,
                                    FilterBatch& batch)>;

}  // namespace tessera::interest

#endif  // TESSERA_INTEREST_FILTER_BATCH_H_
