#include "interest/filter_batch.h"

namespace tessera::interest {

void FilterBatch::Reset(std::span<const View> views) {
  views_ = views;
  const size_t subscribers = size();
  keep_offsets_.resize(subscribers + 1);
  keep_offsets_[0] = 0;
  for (size_t i = 0; i < subscribers; ++i) {
    keep_offsets_[i + 1] = keep_offsets_[i] + (views[i].visible.size() + 7) / 8;
  }
  const size_t bytes = keep_offsets_[subscribers];
  if (keep_.capacity() < bytes) keep_.reserve(2 * bytes);
  keep_.assign(bytes, 0xff);
  // Padding bits are zero, as a guest would write them.
  for (size_t i = 0; i < subscribers; ++i) {
    const size_t tail = views[i].visible.size() % 8;
    if (tail != 0) {
      keep_[keep_offsets_[i + 1] - 1] = static_cast<uint8_t>((1u << tail) - 1);
    }
  }
}

bool FilterBatch::KeepsAll(size_t i) const {
  const size_t n = views_[i].visible.size();
  const uint8_t* keep = keep_.data() + keep_offsets_[i];
  for (size_t b = 0; b < n / 8; ++b) {
    if (keep[b] != 0xff) return false;
  }
  const size_t tail = n % 8;
  const uint8_t mask = static_cast<uint8_t>((1u << tail) - 1);
  return tail == 0 || (keep[n / 8] & mask) == mask;
}

}  // namespace tessera::interest
