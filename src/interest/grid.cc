#include "interest/grid.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tessera::interest::internal {
namespace {

constexpr int64_t kLimit = Grid::kLimit;
constexpr uint32_t kMaxStrips = 16;
constexpr int64_t kPointsPerStrip = 4;

// Sparse keys: row and column (29 bits each), then the strip (4 bits).
uint64_t SlotKey(int64_t cx, int64_t cy, uint32_t strip) {
  return (static_cast<uint64_t>(cy + kLimit) << 33) |
         (static_cast<uint64_t>(cx + kLimit) << 4) | strip;
}

}  // namespace

int64_t Grid::CellOf(double v) const {
  // floor(v / cell size), clamped: clamp first, then truncate and correct
  // negative values (cheaper than std::floor without SSE4.1).
  const double f = std::clamp(v * inv_cell_, static_cast<double>(-kLimit),
                              static_cast<double>(kLimit - 1));
  const int64_t t = static_cast<int64_t>(f);
  return t - static_cast<int64_t>(static_cast<double>(t) > f);
}

void Grid::Locate(double y, int64_t* cell, uint32_t* strip) const {
  const double f = y * inv_cell_;
  const double c = std::floor(f);
  if (!(c >= static_cast<double>(-kLimit))) {
    *cell = -kLimit;
    *strip = 0;
    return;
  }
  if (c > static_cast<double>(kLimit - 1)) {
    *cell = kLimit - 1;
    *strip = strips_ - 1;
    return;
  }
  *cell = static_cast<int64_t>(c);
  // f - c is in [0, 1] (1 by rounding only): clamp.
  const uint32_t s = static_cast<uint32_t>((f - c) * strips_);
  *strip = std::min(s, strips_ - 1);
}

void Grid::Build(std::span<const float> xs, std::span<const float> ys,
                 double cell_size) {
  const size_t n = xs.size();
  cell_size_ = cell_size;
  inv_cell_ = 1.0 / cell_size;
  pcx_.resize(n);
  pcy_.resize(n);
  pstrip_.resize(n);
  keys_.resize(n);
  sx_.resize(n);
  sy_.resize(n);
  srank_.resize(n);
  if (n == 0) {
    min_cx_ = min_cy_ = 0;
    max_cx_ = max_cy_ = -1;
    dense_ = true;
    width_ = 0;
    return;
  }
  int64_t min_cx = kLimit, max_cx = -kLimit, min_cy = kLimit, max_cy = -kLimit;
  for (size_t i = 0; i < n; ++i) {
    const int64_t cx = CellOf(xs[i]);
    const int64_t cy = CellOf(ys[i]);
    pcx_[i] = static_cast<int32_t>(cx);
    pcy_[i] = static_cast<int32_t>(cy);
    min_cx = std::min(min_cx, cx);
    max_cx = std::max(max_cx, cx);
    min_cy = std::min(min_cy, cy);
    max_cy = std::max(max_cy, cy);
  }
  min_cx_ = min_cx;
  max_cx_ = max_cx;
  min_cy_ = min_cy;
  max_cy_ = max_cy;
  width_ = max_cx - min_cx + 1;
  const int64_t cells = width_ * (max_cy - min_cy + 1);
  const int64_t limit = std::max<int64_t>(4 * static_cast<int64_t>(n), 4096);
  dense_ = cells <= limit;
  // Strips pay off in crowded cells only: about kPointsPerStrip points per
  // strip on average, and a dense table within the limit.
  strips_ = kMaxStrips;
  if (dense_) {
    while (strips_ > 1 &&
           (cells * strips_ > limit ||
            static_cast<int64_t>(n) < cells * strips_ * kPointsPerStrip)) {
      strips_ /= 2;
    }
  }
  if (strips_ == 1) {
    std::fill(pstrip_.begin(), pstrip_.end(), 0u);
  } else {
    for (size_t i = 0; i < n; ++i) {
      int64_t cy;
      Locate(ys[i], &cy, &pstrip_[i]);
    }
  }
  if (dense_) {
    BuildDense(xs, ys);
  } else {
    BuildSparse(xs, ys);
  }
}

void Grid::BuildDense(std::span<const float> xs, std::span<const float> ys) {
  const size_t n = xs.size();
  const size_t slots =
      static_cast<size_t>(width_ * (max_cy_ - min_cy_ + 1)) * strips_;
  start_.assign(slots + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t cell = static_cast<uint64_t>((pcy_[i] - min_cy_) * width_ +
                                                (pcx_[i] - min_cx_));
    keys_[i] = cell * strips_ + pstrip_[i];
    ++start_[keys_[i] + 1];
  }
  for (size_t k = 0; k < slots; ++k) start_[k + 1] += start_[k];
  cursor_.assign(start_.begin(), start_.end() - 1);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t p = cursor_[keys_[i]]++;
    sx_[p] = xs[i];
    sy_[p] = ys[i];
    srank_[p] = static_cast<uint32_t>(i);
  }
}

void Grid::BuildSparse(std::span<const float> xs, std::span<const float> ys) {
  const size_t n = xs.size();
  for (size_t i = 0; i < n; ++i)
    keys_[i] = SlotKey(pcx_[i], pcy_[i], pstrip_[i]);
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0u);
  std::sort(order_.begin(), order_.end(), [this](uint32_t a, uint32_t b) {
    return keys_[a] != keys_[b] ? keys_[a] < keys_[b] : a < b;
  });
  slot_keys_.clear();
  start_.clear();
  row_y_.clear();
  row_slots_.clear();
  for (size_t p = 0; p < n; ++p) {
    const uint32_t i = order_[p];
    sx_[p] = xs[i];
    sy_[p] = ys[i];
    srank_[p] = i;
    if (p > 0 && keys_[i] == keys_[order_[p - 1]]) continue;
    if (row_y_.empty() || row_y_.back() != pcy_[i]) {
      row_y_.push_back(pcy_[i]);
      row_slots_.push_back(static_cast<uint32_t>(slot_keys_.size()));
    }
    slot_keys_.push_back(keys_[i]);
    start_.push_back(static_cast<uint32_t>(p));
  }
  start_.push_back(static_cast<uint32_t>(n));
  row_slots_.push_back(static_cast<uint32_t>(slot_keys_.size()));
}

Grid::ColumnSpan Grid::SpanOf(int64_t column, double x, double y, double reach,
                              double slack) const {
  ColumnSpan span{};
  const double gap = Gap(column, x, slack);
  if (gap > reach) return span;
  const double half = std::sqrt(reach * reach - gap * gap) + slack;
  Locate(y - half, &span.c0, &span.t0);
  Locate(y + half, &span.c1, &span.t1);
  span.reachable = true;
  return span;
}

size_t Grid::Query(double x, double y, double radius, std::vector<Run>& runs) {
  runs.clear();
  if (srank_.empty()) return 0;
  // The slack only widens the search: it covers rounding in the cell
  // mapping and in this geometry; the exact test comes later.
  const double slack = 1e-7 * (std::abs(x) + std::abs(y) + radius + cell_size_);
  const double reach = radius + slack;
  if (dense_) {
    QueryDense(x, y, reach, slack, runs);
  } else {
    QuerySparse(x, y, reach, slack, runs);
  }
  size_t total = 0;
  for (const Run& run : runs) total += run.end - run.begin;
  return total;
}

void Grid::QueryDense(double x, double y, double reach, double slack,
                      std::vector<Run>& runs) {
  const int64_t first = std::max(CellOf(x - reach), min_cx_);
  const int64_t last = std::min(CellOf(x + reach), max_cx_);
  const int64_t r0 = std::max(CellOf(y - reach), min_cy_);
  const int64_t r1 = std::min(CellOf(y + reach), max_cy_);
  if (first > last || r0 > r1) return;
  const size_t columns = static_cast<size_t>(last - first + 1);
  if (strips_ == 1) {
    // Whole cells: those whose nearest point is within reach.
    gaps_.resize(columns);
    for (size_t c = 0; c < columns; ++c) {
      const double gap = Gap(first + static_cast<int64_t>(c), x, slack);
      gaps_[c] = gap * gap;
    }
    const double reach2 = reach * reach;
    for (int64_t row = r0; row <= r1; ++row) {
      const double gap = Gap(row, y, slack);
      const double left = reach2 - gap * gap;
      // The gaps fall then rise along the row: the reachable columns are
      // one interval, whose cells are contiguous.
      size_t lo = 0, hi = columns;
      while (lo < hi && gaps_[lo] > left) ++lo;
      while (hi > lo && gaps_[hi - 1] > left) --hi;
      if (lo == hi) continue;
      const uint32_t* start =
          start_.data() + (row - min_cy_) * width_ + (first - min_cx_);
      AddRun(start[lo], start[hi], runs);
    }
    return;
  }
  // Each column's extent along y, shared by all rows.
  spans_.resize(columns);
  for (size_t c = 0; c < columns; ++c) {
    spans_[c] = SpanOf(first + static_cast<int64_t>(c), x, y, reach, slack);
  }
  for (int64_t row = r0; row <= r1; ++row) {
    const uint32_t* start =
        start_.data() +
        ((row - min_cy_) * width_ + (first - min_cx_)) * strips_;
    for (const ColumnSpan& s : spans_) {
      if (s.reachable && s.c0 <= row && row <= s.c1) {
        const uint32_t s0 = s.c0 < row ? 0 : s.t0;
        const uint32_t s1 = s.c1 > row ? strips_ - 1 : s.t1;
        AddRun(start[s0], start[s1 + 1], runs);
      }
      start += strips_;
    }
  }
}

void Grid::QuerySparse(double x, double y, double reach, double slack,
                       std::vector<Run>& runs) const {
  const int64_t r0 = CellOf(y - reach), r1 = CellOf(y + reach);
  const int64_t c0 = CellOf(x - reach), c1 = CellOf(x + reach);
  auto row_it = std::lower_bound(row_y_.begin(), row_y_.end(), r0);
  for (; row_it != row_y_.end() && *row_it <= r1; ++row_it) {
    const int64_t row = *row_it;
    const size_t r = static_cast<size_t>(row_it - row_y_.begin());
    const auto slots_end = slot_keys_.begin() + row_slots_[r + 1];
    auto slot = std::lower_bound(slot_keys_.begin() + row_slots_[r], slots_end,
                                 SlotKey(c0, row, 0));
    const uint64_t last = SlotKey(c1, row, kMaxStrips - 1);
    int64_t col = kLimit;  // the column `span` is for
    ColumnSpan span{};
    for (; slot != slots_end && *slot <= last; ++slot) {
      const int64_t slot_col =
          static_cast<int64_t>((*slot >> 4) & ((uint64_t{1} << 29) - 1)) -
          kLimit;
      if (slot_col != col) {
        col = slot_col;
        span = SpanOf(col, x, y, reach, slack);
      }
      if (!span.reachable || span.c0 > row || row > span.c1) continue;
      const uint32_t strip = static_cast<uint32_t>(*slot & 15);
      if ((span.c0 == row && strip < span.t0) ||
          (span.c1 == row && strip > span.t1)) {
        continue;
      }
      const size_t k = static_cast<size_t>(slot - slot_keys_.begin());
      AddRun(start_[k], start_[k + 1], runs);
    }
  }
}

}  // namespace tessera::interest::internal
