#include "replication/update_plan.h"

#include <algorithm>
#include <array>
#include <bit>

#include "replication/bit_io.h"

namespace tessera::replication {
namespace {

constexpr int kSmall = UpdatePlanner::kSmall;

constexpr auto kSmallBits = [] {
  std::array<std::array<uint8_t, kMaxOrder + 1>, kSmall> t{};
  for (int v = 0; v < kSmall; ++v) {
    for (int k = 0; k <= kMaxOrder; ++k) {
      t[v][k] = static_cast<uint8_t>(ExpGolombBits(v, k));
    }
  }
  return t;
}();

size_t PartSize(size_t count, uint64_t bits, uint64_t comp_bytes) {
  if (count == 0) return VarintSize(0);
  const uint64_t bit_bytes = (bits + 7) / 8;
  return VarintSize(count) + 3 + VarintSize(bit_bytes) + bit_bytes + comp_bytes;
}

}  // namespace

UpdatePlan UpdatePlanner::Evaluate(std::span<const UpdateCandidate> cands,
                                   bool use_rank, size_t limit) {
  UpdatePlan plan;
  uint64_t bits = 0;
  uint64_t comp_bytes = 0;
  int max_small[3] = {-1, -1, -1};
  for (int a = 0; a < 3; ++a) {
    std::fill(std::begin(counts_[a]), std::end(counts_[a]), 0);
    large_[a].clear();
  }
  uint8_t prev_mask = kInitialMask;
  uint64_t prev_id = 0;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (use_rank && rank_[i] >= limit) continue;
    const UpdateCandidate& c = cands[i];
    const uint64_t gap = plan.count == 0 ? c.id : c.id - prev_id - 1;
    bits += ExpGolombBits(gap, 0) + 1 + (c.wire_mask == prev_mask ? 0 : 4);
    prev_mask = c.wire_mask;
    prev_id = c.id;
    ++plan.count;
    comp_bytes += c.comp_bytes;
    for (int a = 0; a < 3; ++a) {
      if ((c.wire_mask & (kMaskX >> a)) == 0) continue;
      const uint64_t v = c.zz[a];
      if (v < kSmall) {
        ++counts_[a][v];
        max_small[a] = std::max(max_small[a], static_cast<int>(v));
      } else {
        large_[a].push_back(v);
      }
    }
  }
  for (int a = 0; a < 3; ++a) {
    // Orders above the values' bit width only add bits.
    int width = max_small[a] < 0 ? 0 : std::bit_width(unsigned(max_small[a]));
    for (uint64_t v : large_[a]) {
      width = std::max(width, static_cast<int>(std::bit_width(v)));
    }
    const int max_k = std::min(kMaxOrder, width);
    uint64_t best = UINT64_MAX;
    for (int k = 0; k <= max_k; ++k) {
      uint64_t cost = 0;
      for (int v = 0; v <= max_small[a]; ++v) {
        cost += uint64_t{counts_[a][v]} * kSmallBits[v][k];
      }
      // zigzag deltas of |q| <= 2^52 stay far below 2^64 - 2^32.
      for (uint64_t v : large_[a]) cost += ExpGolombBits(v, k);
      if (cost < best) {
        best = cost;
        plan.k[a] = k;
      }
    }
    if (best != UINT64_MAX) bits += best;
  }
  plan.bits = bits;
  plan.size = PartSize(plan.count, bits, comp_bytes);
  return plan;
}

UpdatePlan UpdatePlanner::WidenMasks(std::span<UpdateCandidate> cands,
                                     bool use_rank, size_t limit,
                                     const UpdatePlan& plan) {
  constexpr uint8_t kAxes = kMaskX | kMaskY | kMaskZ;
  // The most common set of changed axes.
  uint32_t seen[16] = {};
  for (size_t i = 0; i < cands.size(); ++i) {
    if (!use_rank || rank_[i] < limit) ++seen[cands[i].mask & kAxes];
  }
  uint8_t common = 0;
  for (uint8_t m = 1; m < 16; ++m) {
    if (seen[m] > (common == 0 ? 0 : seen[common])) common = m;
  }
  if (common == 0 || seen[common] == plan.count) return plan;
  auto axis_bits = [&](const UpdateCandidate& c, uint8_t mask) {
    uint64_t bits = 0;
    for (int a = 0; a < 3; ++a) {
      if (mask & (kMaskX >> a)) bits += ExpGolombBits(c.zz[a], plan.k[a]);
    }
    return bits;
  };
  // Shortest path: state 0 = the record's own mask, 1 = widened.
  choice_.assign(cands.size(), 0);
  uint64_t cost[2] = {0, UINT64_MAX};
  uint8_t last[2] = {kInitialMask, kInitialMask};
  for (size_t i = 0; i < cands.size(); ++i) {
    if (use_rank && rank_[i] >= limit) continue;
    const UpdateCandidate& c = cands[i];
    const uint8_t options[2] = {c.mask, static_cast<uint8_t>(c.mask | common)};
    uint64_t next[2] = {UINT64_MAX, UINT64_MAX};
    for (int o = 0; o < 2; ++o) {
      if (o == 1 && options[1] == options[0]) break;
      const uint64_t own = axis_bits(c, options[o]);
      for (int from = 0; from < 2; ++from) {
        if (cost[from] == UINT64_MAX) continue;
        const uint64_t total =
            cost[from] + (last[from] == options[o] ? 1 : 5) + own;
        if (total < next[o]) {
          next[o] = total;
          choice_[i] = static_cast<uint8_t>((choice_[i] & ~(1 << (2 + o))) |
                                            (from << (2 + o)));
        }
      }
    }
    for (int o = 0; o < 2; ++o) {
      cost[o] = next[o];
      last[o] = options[o];
    }
  }
  // Walk back from the cheaper end state.
  int state = cost[1] < cost[0] ? 1 : 0;
  for (size_t i = cands.size(); i-- > 0;) {
    if (use_rank && rank_[i] >= limit) continue;
    UpdateCandidate& c = cands[i];
    c.wire_mask = state == 1 ? static_cast<uint8_t>(c.mask | common) : c.mask;
    state = (choice_[i] >> (2 + state)) & 1;
  }
  UpdatePlan widened = Evaluate(cands, use_rank, limit);
  if (widened.size < plan.size ||
      (widened.size == plan.size && widened.bits < plan.bits)) {
    return widened;
  }
  for (UpdateCandidate& c : cands) c.wire_mask = c.mask;
  return plan;
}

UpdatePlan UpdatePlanner::PlanAll(std::span<UpdateCandidate> cands,
                                  std::vector<uint8_t>* selected) {
  selected->assign(cands.size(), 1);
  for (UpdateCandidate& c : cands) c.wire_mask = c.mask;
  return WidenMasks(cands, false, 0, Evaluate(cands, false, 0));
}

UpdatePlan UpdatePlanner::PlanWithin(std::span<UpdateCandidate> cands,
                                     size_t base_size, uint32_t budget,
                                     std::vector<uint8_t>* selected) {
  selected->assign(cands.size(), 1);
  for (UpdateCandidate& c : cands) c.wire_mask = c.mask;
  const UpdatePlan all = Evaluate(cands, false, 0);
  if (cands.size() <= 1 || base_size + all.size <= budget) {
    return WidenMasks(cands, false, 0, all);
  }
  order_.resize(cands.size());
  for (size_t i = 0; i < cands.size(); ++i)
    order_[i] = static_cast<uint32_t>(i);
  std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
    if (cands[a].priority != cands[b].priority) {
      return cands[a].priority > cands[b].priority;
    }
    return cands[a].id < cands[b].id;
  });
  rank_.resize(cands.size());
  for (size_t r = 0; r < order_.size(); ++r) {
    rank_[order_[r]] = static_cast<uint32_t>(r);
  }
  // The size only grows with the set sent (dropping a record never adds
  // bits), so the largest prefix that fits is found by bisection.
  size_t lo = 1;                 // always goes
  size_t hi = cands.size() - 1;  // all do not fit
  UpdatePlan best = Evaluate(cands, true, 1);
  while (lo < hi) {
    const size_t mid = lo + (hi - lo + 1) / 2;
    UpdatePlan p = Evaluate(cands, true, mid);
    if (base_size + p.size <= budget) {
      lo = mid;
      best = p;
    } else {
      hi = mid - 1;
    }
  }
  if (best.count != lo) best = Evaluate(cands, true, lo);
  for (size_t i = 0; i < cands.size(); ++i) {
    (*selected)[i] = rank_[i] < lo ? 1 : 0;
  }
  // Widening only ever makes the payload smaller: it still fits.
  return WidenMasks(cands, true, lo, best);
}

}  // namespace tessera::replication
