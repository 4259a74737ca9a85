// Which pending updates a payload carries and how its bit section is coded:
// the Exp-Golomb order of each axis is chosen per payload to minimise the
// bits, and under a byte budget the most urgent updates that fit are kept
// (docs/protocol.md, "Byte budget").
#ifndef TESSERA_REPLICATION_UPDATE_PLAN_H_
#define TESSERA_REPLICATION_UPDATE_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tessera::replication {

struct MirrorEntity;

// Mask bits of an update record, in wire order (X is written first).
inline constexpr uint8_t kMaskX = 8;
inline constexpr uint8_t kMaskY = 4;
inline constexpr uint8_t kMaskZ = 2;
inline constexpr uint8_t kMaskC = 1;
// The "previous mask" before the first record.
inline constexpr uint8_t kInitialMask = kMaskX | kMaskY;
// The largest Exp-Golomb order a payload may use.
inline constexpr int kMaxOrder = 32;

struct UpdateCandidate {
  uint64_t id = 0;
  uint8_t mask = 0;            // what changed
  uint8_t wire_mask = 0;       // what the record lists: mask, maybe with more
                               // axes (delta 0) when that saves mask bits
  uint64_t zz[3] = {0, 0, 0};  // zigzag(q_now - q_held) per axis in mask
  uint32_t comp_bytes = 0;     // its component section entry, 0 without C
  double priority = 0;         // only used under a budget
  // The stream's bookkeeping (not read by the planner).
  uint32_t held_index = 0;
  const MirrorEntity* entity = nullptr;
  uint32_t comp_offset = 0;
  uint32_t comp_length = 0;
  uint32_t comp_count = 0;
};

struct UpdatePlan {
  size_t count = 0;      // updates sent
  int k[3] = {0, 0, 0};  // Exp-Golomb orders
  uint64_t bits = 0;     // of the bit section, before padding
  size_t size = 0;       // bytes of the whole update part of the payload
};

class UpdatePlanner {
 public:
  static constexpr int kSmall = 64;  // values below this are histogrammed

  // Every candidate (ascending ids, wire_mask == mask) goes. Sets
  // (*selected)[i] to 1 and the records' wire_mask.
  UpdatePlan PlanAll(std::span<UpdateCandidate> candidates,
                     std::vector<uint8_t>* selected);
  // For when base_size plus all of them exceeds `budget`: the candidates
  // ranked first by (priority desc, id asc) go, as many as keep the payload
  // within the budget, and at least one. Sets (*selected)[i] and the
  // records' wire_mask.
  UpdatePlan PlanWithin(std::span<UpdateCandidate> candidates, size_t base_size,
                        uint32_t budget, std::vector<uint8_t>* selected);

 private:
  // The plan for the candidates whose rank is below `limit` (all when
  // `use_rank` is false).
  UpdatePlan Evaluate(std::span<const UpdateCandidate> candidates,
                      bool use_rank, size_t limit);
  // Lists axes that did not change in records where that saves more mask
  // bits than the zero deltas cost (a shortest path over each record's
  // choice of its own mask or that mask plus the most common one's axes).
  // Keeps `plan` when that saves nothing.
  UpdatePlan WidenMasks(std::span<UpdateCandidate> candidates, bool use_rank,
                        size_t limit, const UpdatePlan& plan);

  uint32_t counts_[3][kSmall] = {};
  std::vector<uint64_t> large_[3];
  std::vector<uint32_t> order_;
  std::vector<uint32_t> rank_;
  std::vector<uint8_t> choice_;  // WidenMasks' back pointers
};

}  // namespace tessera::replication

#endif  // TESSERA_REPLICATION_UPDATE_PLAN_H_
