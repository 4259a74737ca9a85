#include "loadtest/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace tessera::loadtest {
namespace {

constexpr uint64_t kSubBuckets = uint64_t{1} << Histogram::kSubBucketBits;

}  // namespace

size_t Histogram::IndexOf(uint64_t value) {
  if (value < kSubBuckets) return static_cast<size_t>(value);
  const int shift = std::bit_width(value) - 1 - kSubBucketBits;
  // (shift + 1) * kSubBuckets + (mantissa - kSubBuckets)
  return static_cast<size_t>(static_cast<uint64_t>(shift) * kSubBuckets +
                             (value >> shift));
}

uint64_t Histogram::LowestIn(size_t index) {
  if (index < kSubBuckets) return index;
  const uint64_t shift = index / kSubBuckets - 1;
  const uint64_t mantissa = index - shift * kSubBuckets;
  return mantissa << shift;
}

uint64_t Histogram::HighestIn(size_t index) {
  if (index < kSubBuckets) return index;
  const uint64_t shift = index / kSubBuckets - 1;
  const uint64_t mantissa = index - shift * kSubBuckets;
  return ((mantissa + 1) << shift) - 1;
}

void Histogram::Record(uint64_t value) {
  const size_t index = IndexOf(value);
  if (index >= counts_.size()) counts_.resize(index + 1, 0);
  ++counts_[index];
  ++count_;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  sum_ += static_cast<double>(value);
}

void Histogram::Merge(const Histogram& other) {
  if (other.count_ == 0) return;
  if (other.counts_.size() > counts_.size()) {
    counts_.resize(other.counts_.size(), 0);
  }
  for (size_t i = 0; i < other.counts_.size(); ++i) {
    counts_[i] += other.counts_[i];
  }
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

uint64_t Histogram::Percentile(double percent) const {
  if (count_ == 0) return 0;
  if (percent >= 100) return max_;
  const double exact_rank =
      std::ceil(std::max(0.0, percent) / 100.0 * static_cast<double>(count_));
  const uint64_t rank =
      std::max<uint64_t>(1, static_cast<uint64_t>(exact_rank));
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const uint64_t low = LowestIn(i);
      const uint64_t middle = low + (HighestIn(i) - low) / 2;
      return std::clamp(middle, min_, max_);
    }
  }
  return max_;
}

nlohmann::json Histogram::ToJson() const {
  nlohmann::json buckets = nlohmann::json::array();
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] != 0) buckets.push_back({i, counts_[i]});
  }
  return {{"count", count_},
          {"min", min()},
          {"max", max_},
          {"sum", sum_},
          {"sub_bucket_bits", kSubBucketBits},
          {"buckets", std::move(buckets)}};
}

Result<Histogram> Histogram::FromJson(const nlohmann::json& value) {
  auto bad = [](const std::string& why) {
    return InvalidArgument("bad histogram: " + why);
  };
  if (!value.is_object()) return bad("not an object");
  if (value.value("sub_bucket_bits", -1) != kSubBucketBits) {
    return bad("sub_bucket_bits must be " + std::to_string(kSubBucketBits));
  }
  const auto buckets = value.find("buckets");
  if (buckets == value.end() || !buckets->is_array()) {
    return bad("no \"buckets\" array");
  }
  // Built from the buckets; min, max and sum are taken from the fields
  // (the buckets only bound them).
  Histogram h;
  constexpr size_t kMaxIndex = (64 - kSubBucketBits + 1) * kSubBuckets;
  for (const auto& bucket : *buckets) {
    if (!bucket.is_array() || bucket.size() != 2 ||
        !bucket[0].is_number_unsigned() || !bucket[1].is_number_unsigned()) {
      return bad("each bucket must be [index, count]");
    }
    const size_t index = bucket[0].get<size_t>();
    const uint64_t n = bucket[1].get<uint64_t>();
    if (index >= kMaxIndex) return bad("bucket index out of range");
    if (index >= h.counts_.size()) h.counts_.resize(index + 1, 0);
    h.counts_[index] += n;
    h.count_ += n;
  }
  if (h.count_ == 0) return Histogram();
  auto field = [&](const char* name) -> const nlohmann::json* {
    auto it = value.find(name);
    return it != value.end() && it->is_number() ? &*it : nullptr;
  };
  const nlohmann::json* min = field("min");
  const nlohmann::json* max = field("max");
  const nlohmann::json* sum = field("sum");
  if (min == nullptr || max == nullptr || sum == nullptr) {
    return bad("min, max and sum are required");
  }
  h.min_ = min->get<uint64_t>();
  h.max_ = max->get<uint64_t>();
  h.sum_ = sum->get<double>();
  if (h.min_ > h.max_) return bad("min above max");
  return h;
}

}  // namespace tessera::loadtest
