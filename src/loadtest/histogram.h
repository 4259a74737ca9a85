// A log-linear histogram of non-negative integers (round trips in
// microseconds), after the idea of HdrHistogram: values below 2^7 have a
// bucket each; above, every power of two is split into 128 equal buckets,
// so a bucket's width is under 1/128 of its values and a percentile read
// back is within 0.8% of the exact one. Histograms add bucket by bucket,
// so the percentiles of merged reports are as exact as those of one run.
//
// Thread-compatible: one writer, or external locking.
#ifndef TESSERA_LOADTEST_HISTOGRAM_H_
#define TESSERA_LOADTEST_HISTOGRAM_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/status.h"

namespace tessera::loadtest {

class Histogram {
 public:
  static constexpr int kSubBucketBits = 7;

  void Record(uint64_t value);
  void Merge(const Histogram& other);
  void Clear() { *this = Histogram(); }

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double mean() const {
    return count_ == 0 ? 0 : sum_ / static_cast<double>(count_);
  }
  // The value below which `percent` (0..100) of the samples lie: the
  // sample of rank ceil(percent/100 * count), read back as the middle of
  // its bucket (clamped to [min, max]; 100 gives the exact max). 0 when
  // empty.
  uint64_t Percentile(double percent) const;

  // {"count", "min", "max", "sum", "sub_bucket_bits", "buckets":
  // [[index, count], ...]} (only non-empty buckets).
  nlohmann::json ToJson() const;
  // Errors: kInvalidArgument if `value` is not such an object (or was
  // written with other sub_bucket_bits).
  static Result<Histogram> FromJson(const nlohmann::json& value);

  // The bucket of `value`, and the smallest and largest value of a bucket.
  static size_t IndexOf(uint64_t value);
  static uint64_t LowestIn(size_t index);
  static uint64_t HighestIn(size_t index);

 private:
  std::vector<uint64_t> counts_;  // grown to the largest index seen
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  double sum_ = 0;
};

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_HISTOGRAM_H_
