// Percentiles of position errors over many millions of samples: a fixed
// histogram of 1e-5-unit bins up to 2 units (larger errors are counted in
// the last bin, and the maximum is kept exactly).
#ifndef TESSERA_BENCH_REPLICATION_ERROR_HISTOGRAM_H_
#define TESSERA_BENCH_REPLICATION_ERROR_HISTOGRAM_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tessera::bench {

class ErrorHistogram {
 public:
  static constexpr double kBin = 1e-5;
  static constexpr int kBins = 200000;

  ErrorHistogram() : counts_(kBins + 1, 0) {}

  void Add(double error) {
    const double b = error / kBin;
    counts_[b >= kBins ? kBins : static_cast<int>(b)]++;
    ++total_;
    max_ = std::max(max_, error);
  }
  uint64_t count() const { return total_; }
  double max() const { return max_; }
  // The upper edge of the bin holding the p-th fraction (0..1).
  double Percentile(double p) const {
    if (total_ == 0) return 0;
    const uint64_t want =
        static_cast<uint64_t>(p * static_cast<double>(total_) + 0.5);
    uint64_t seen = 0;
    for (int i = 0; i <= kBins; ++i) {
      seen += counts_[i];
      if (seen >= want && seen > 0) {
        return i == kBins ? max_ : std::min(max_, (i + 1) * kBin);
      }
    }
    return max_;
  }

 private:
  std::vector<uint64_t> counts_;
  uint64_t total_ = 0;
  double max_ = 0;
};

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_REPLICATION_ERROR_HISTOGRAM_H_
