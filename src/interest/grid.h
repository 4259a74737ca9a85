// The uniform grid behind InterestManager (internal): points bucketed by
// cell, each cell cut into horizontal strips, and stored strip by strip in
// flat arrays; so the points of a cell whose y is in a range are one
// contiguous run.
//
// Cell (cx, cy) holds the points with floor(x / cell_size) == cx and
// floor(y / cell_size) == cy (cell coordinates are clamped to +-2^28, which
// keeps the mapping monotonic, so queries stay exact for any finite input).
// Worlds whose occupied bounding box has few cells per point use a dense
// table of strips (counting sort, O(points + cells)); sparse worlds fall
// back to sorted keys and binary searches.
#ifndef TESSERA_INTEREST_GRID_H_
#define TESSERA_INTEREST_GRID_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tessera::interest::internal {

// A half-open range [begin, end) of the grid's arrays.
struct Run {
  uint32_t begin;
  uint32_t end;
};

class Grid {
 public:
  // Cell coordinates live in [-kLimit, kLimit - 1]; cells at the limits
  // also hold everything beyond them.
  static constexpr int64_t kLimit = int64_t{1} << 28;

  // Rebuilds the grid from points xs[i], ys[i] (finite; fewer than 2^31),
  // whose index i is reported back by ranks(). `cell_size` > 0 and finite.
  void Build(std::span<const float> xs, std::span<const float> ys,
             double cell_size);

  // Replaces `runs` with disjoint runs that hold every point within
  // `radius` (>= 0) of (x, y): in each cell the circle reaches, the strips
  // that its extent over the cell's column reaches. Returns the number of
  // points in them.
  size_t Query(double x, double y, double radius, std::vector<Run>& runs);

  // Point data in grid order: position and the point's index in Build().
  const float* xs() const { return sx_.data(); }
  const float* ys() const { return sy_.data(); }
  const uint32_t* ranks() const { return srank_.data(); }
  size_t size() const { return srank_.size(); }

 private:
  // Cell of a coordinate (monotonic, clamped) and, for y, the strip within
  // the cell ((cell, strip) is monotonic too).
  int64_t CellOf(double v) const;
  void Locate(double y, int64_t* cell, uint32_t* strip) const;
  // Where a column's part of the query circle starts and ends along y, as
  // (cell, strip) pairs; `reachable` false when the circle misses it.
  struct ColumnSpan {
    bool reachable;
    int64_t c0, c1;
    uint32_t t0, t1;
  };
  ColumnSpan SpanOf(int64_t column, double x, double y, double reach,
                    double slack) const;
  // Distance from `centre` to the band of cells `cell` (along one axis),
  // less `slack`, at least 0. The cells at the clamp limits are unbounded
  // on their outer side.
  double Gap(int64_t cell, double centre, double slack) const {
    double d = 0;
    if (cell > -kLimit) {
      const double lo = static_cast<double>(cell) * cell_size_;
      if (centre < lo) d = lo - centre;
    }
    if (cell < kLimit - 1) {
      const double hi = static_cast<double>(cell + 1) * cell_size_;
      if (centre > hi) d = centre - hi;
    }
    return d > slack ? d - slack : 0;
  }
  static void AddRun(uint32_t b, uint32_t e, std::vector<Run>& runs) {
    if (b >= e) return;
    if (!runs.empty() && runs.back().end == b) {
      runs.back().end = e;
    } else {
      runs.push_back({b, e});
    }
  }
  void BuildDense(std::span<const float> xs, std::span<const float> ys);
  void BuildSparse(std::span<const float> xs, std::span<const float> ys);
  void QueryDense(double x, double y, double reach, double slack,
                  std::vector<Run>& runs);
  void QuerySparse(double x, double y, double reach, double slack,
                   std::vector<Run>& runs) const;

  double cell_size_ = 1;
  double inv_cell_ = 1;
  uint32_t strips_ = 1;  // per cell
  bool dense_ = true;
  int64_t min_cx_ = 0, max_cx_ = -1, min_cy_ = 0, max_cy_ = -1;
  int64_t width_ = 0;  // dense: columns of the table

  std::vector<int32_t> pcx_, pcy_;  // per input point: its cell
  std::vector<uint32_t> pstrip_;    // and strip
  std::vector<uint64_t> keys_;      // per input point: its slot's key
  std::vector<float> sx_, sy_;      // grid order
  std::vector<uint32_t> srank_;     // grid order: input index

  // Dense: start_[k] .. start_[k + 1] is slot k = (row * width_ + column) *
  // strips_ + strip (row and column relative to the bounding box).
  // Sparse: slot k is the k-th occupied one, whose key is slot_keys_[k].
  std::vector<uint32_t> start_;
  std::vector<uint32_t> cursor_;
  std::vector<uint64_t> slot_keys_;
  std::vector<int32_t> row_y_;       // sparse: distinct rows, ascending
  std::vector<uint32_t> row_slots_;  // row r: slots [row_slots_[r], [r+1])
  std::vector<uint32_t> order_;      // sparse: points by key
  std::vector<ColumnSpan> spans_;    // Query scratch
  std::vector<double> gaps_;         // Query scratch
};

}  // namespace tessera::interest::internal

#endif  // TESSERA_INTEREST_GRID_H_
