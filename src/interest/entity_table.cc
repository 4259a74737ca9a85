#include "interest/entity_table.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

namespace tessera::interest::internal {

bool EntityTable::OrderAscending(std::span<const EntityPos> entities) const {
  for (size_t k = 1; k < order_.size(); ++k) {
    if (entities[order_[k - 1]].id >= entities[order_[k]].id) return false;
  }
  return true;
}

// LSD radix sort of the input indices by id, one byte per pass, skipping
// the bytes every id shares (small ids take two passes).
void EntityTable::SortOrder(std::span<const EntityPos> entities) {
  const size_t n = entities.size();
  std::array<std::array<uint32_t, 256>, 8> hist{};
  for (const EntityPos& e : entities) {
    for (int b = 0; b < 8; ++b) ++hist[b][(e.id >> (8 * b)) & 0xff];
  }
  order_.resize(n);
  order_tmp_.resize(n);
  std::iota(order_.begin(), order_.end(), 0u);
  for (int b = 0; b < 8; ++b) {
    const int shift = 8 * b;
    if (hist[b][(entities[0].id >> shift) & 0xff] == n) continue;
    uint32_t sum = 0;
    for (uint32_t& h : hist[b]) {
      const uint32_t count = h;
      h = sum;
      sum += count;
    }
    for (uint32_t i : order_) {
      order_tmp_[hist[b][(entities[i].id >> shift) & 0xff]++] = i;
    }
    order_.swap(order_tmp_);
  }
}

Status EntityTable::Load(std::span<const EntityPos> entities) {
  const size_t n = entities.size();
  if (n >= (size_t{1} << 31)) {
    return InvalidArgument("interest: too many entities (" + std::to_string(n) +
                           ")");
  }
  // Usually the caller lists entities in the same order every tick, often
  // already by id: try the previous order, then the input order, then sort.
  if (order_.size() != n || !OrderAscending(entities)) {
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), 0u);
    if (!OrderAscending(entities)) {
      SortOrder(entities);
      if (!OrderAscending(entities)) {
        for (size_t k = 1; k < n; ++k) {
          const uint64_t id = entities[order_[k]].id;
          if (entities[order_[k - 1]].id == id) {
            return InvalidArgument("interest: entity id " + std::to_string(id) +
                                   " is listed twice");
          }
        }
      }
    }
  }
  ids_.resize(n);
  gens_.resize(n);
  xs_.resize(n);
  ys_.resize(n);
  for (size_t r = 0; r < n; ++r) {
    const EntityPos& e = entities[order_[r]];
    if (!std::isfinite(e.x) || !std::isfinite(e.y)) {
      ids_.clear();
      return InvalidArgument("interest: entity " + std::to_string(e.id) +
                             " has a non-finite position");
    }
    ids_[r] = e.id;
    gens_[r] = e.generation;
    xs_[r] = e.x;
    ys_[r] = e.y;
  }
  // Previous ranks to current ones: a merge of both id-ordered lists
  // (not needed when the entities are the same, the usual case).
  const size_t prev_n = prev_ids_.size();
  same_as_previous_ =
      prev_n == n && std::equal(ids_.begin(), ids_.end(), prev_ids_.begin()) &&
      std::equal(gens_.begin(), gens_.end(), prev_gens_.begin());
  if (same_as_previous_) return Status::Ok();
  remap_.assign(prev_n, kGone);
  size_t r = 0;
  for (size_t p = 0; p < prev_n && r < n; ++p) {
    while (r < n && ids_[r] < prev_ids_[p]) ++r;
    if (r < n && ids_[r] == prev_ids_[p] && gens_[r] == prev_gens_[p]) {
      remap_[p] = static_cast<uint32_t>(r);
    }
  }
  return Status::Ok();
}

void EntityTable::Commit() {
  if (same_as_previous_) return;
  prev_ids_.assign(ids_.begin(), ids_.end());
  prev_gens_.assign(gens_.begin(), gens_.end());
}

void EntityTable::Clear() {
  prev_ids_.clear();
  prev_gens_.clear();
}

}  // namespace tessera::interest::internal
