#include "loadtest/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace tessera::loadtest {
namespace {

// The sample of rank ceil(p/100 * n), as Histogram::Percentile defines it.
uint64_t ExactPercentile(std::vector<uint64_t> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * v.size()));
  return v[std::max<size_t>(rank, 1) - 1];
}

void ExpectClose(uint64_t got, uint64_t want, const char* what) {
  const double tolerance = std::max(1.0, static_cast<double>(want) / 128.0);
  EXPECT_LE(std::fabs(static_cast<double>(got) - static_cast<double>(want)),
            tolerance)
      << what << ": got " << got << ", exact " << want;
}

TEST(HistogramTest, BucketsAreContiguousAndNarrow) {
  for (size_t i = 1; i < 6000; ++i) {
    ASSERT_EQ(Histogram::LowestIn(i), Histogram::HighestIn(i - 1) + 1) << i;
    ASSERT_EQ(Histogram::IndexOf(Histogram::LowestIn(i)), i);
    ASSERT_EQ(Histogram::IndexOf(Histogram::HighestIn(i)), i);
    const double width = static_cast<double>(Histogram::HighestIn(i) -
                                             Histogram::LowestIn(i) + 1);
    if (i < 128) {
      ASSERT_EQ(width, 1) << "values below 128 are exact";
    } else {
      ASSERT_LE(width / static_cast<double>(Histogram::LowestIn(i)),
                1.0 / 128 + 1e-12);
    }
  }
  EXPECT_LT(Histogram::IndexOf(UINT64_MAX), 7424u);
}

TEST(HistogramTest, PercentilesMatchExactOnRandomData) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> rtt(std::log(20000.0), 0.8);
  std::vector<uint64_t> values;
  Histogram h;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = static_cast<uint64_t>(rtt(rng));
    values.push_back(v);
    h.Record(v);
  }
  EXPECT_EQ(h.count(), values.size());
  for (double p : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9}) {
    ExpectClose(h.Percentile(p), ExactPercentile(values, p), "percentile");
  }
  EXPECT_EQ(h.Percentile(100), *std::max_element(values.begin(), values.end()));
  EXPECT_EQ(h.max(), *std::max_element(values.begin(), values.end()));
  EXPECT_EQ(h.min(), *std::min_element(values.begin(), values.end()));
}

TEST(HistogramTest, SmallValuesAreExact) {
  Histogram h;
  for (uint64_t v = 1; v <= 100; ++v) h.Record(v);
  EXPECT_EQ(h.Percentile(50), 50u);
  EXPECT_EQ(h.Percentile(99), 99u);
  EXPECT_EQ(h.Percentile(0), 1u);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
  EXPECT_EQ(Histogram().Percentile(50), 0u);
}

TEST(HistogramTest, MergeEqualsRecordingTheUnion) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<uint64_t> a_dist(1000, 5000);
  std::exponential_distribution<double> b_dist(1.0 / 80000);
  Histogram a, b, both;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t x = a_dist(rng);
    const uint64_t y = static_cast<uint64_t>(b_dist(rng));
    a.Record(x);
    b.Record(y);
    both.Record(x);
    both.Record(y);
  }
  Histogram merged = a;
  merged.Merge(b);
  EXPECT_EQ(merged.count(), both.count());
  EXPECT_EQ(merged.min(), both.min());
  EXPECT_EQ(merged.max(), both.max());
  for (double p : {50.0, 90.0, 99.0}) {
    EXPECT_EQ(merged.Percentile(p), both.Percentile(p)) << p;
  }
}

TEST(HistogramTest, JsonRoundTrip) {
  Histogram h;
  for (uint64_t v : {3u, 150u, 150u, 99999u, 12345678u}) h.Record(v);
  Result<Histogram> back = Histogram::FromJson(h.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), h.ToJson());
  EXPECT_EQ(back->Percentile(50), h.Percentile(50));

  EXPECT_FALSE(Histogram::FromJson(nlohmann::json::array()).ok());
  nlohmann::json other_precision = h.ToJson();
  other_precision["sub_bucket_bits"] = 5;
  EXPECT_FALSE(Histogram::FromJson(other_precision).ok());
  nlohmann::json bad_bucket = h.ToJson();
  bad_bucket["buckets"].push_back({1000000, 1});
  EXPECT_FALSE(Histogram::FromJson(bad_bucket).ok());
}

}  // namespace
}  // namespace tessera::loadtest
