#include "common/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

namespace tessera {
namespace {

TEST(Metrics, EmptyRegistryRendersNothing) {
  Metrics m;
  EXPECT_EQ(m.Render(), "");
}

TEST(Metrics, CountersAndGaugesSortedByName) {
  Metrics m;
  m.GetGauge("tessera_shards", "Shards by status.", {{"status", "running"}})
      ->Set(3);
  m.GetGauge("tessera_shards", "ignored", {{"status", "failed"}})->Add(-2);
  Counter* c = m.GetCounter("tessera_inputs_total", "Inputs received.");
  c->Add();
  c->Add(41);
  m.GetCounter("tessera_frames_total", "Frames sent.",
               {{"shard", "a"}, {"codec", "json"}})
      ->Add(7);
  EXPECT_EQ(m.Render(),
            "# HELP tessera_frames_total Frames sent.\n"
            "# TYPE tessera_frames_total counter\n"
            "tessera_frames_total{codec=\"json\",shard=\"a\"} 7\n"
            "# HELP tessera_inputs_total Inputs received.\n"
            "# TYPE tessera_inputs_total counter\n"
            "tessera_inputs_total 42\n"
            "# HELP tessera_shards Shards by status.\n"
            "# TYPE tessera_shards gauge\n"
            "tessera_shards{status=\"failed\"} -2\n"
            "tessera_shards{status=\"running\"} 3\n");
}

TEST(Metrics, SameNameAndLabelsIsTheSameMetric) {
  Metrics m;
  Counter* a = m.GetCounter("x_total", "X.", {{"k", "v"}});
  EXPECT_EQ(a, m.GetCounter("x_total", "X.", {{"k", "v"}}));
  EXPECT_NE(a, m.GetCounter("x_total", "X.", {{"k", "w"}}));
  Histogram* h = m.GetHistogram("h", "H.", {1, 2});
  EXPECT_EQ(h, m.GetHistogram("h", "H.", {5}));
  EXPECT_EQ(h->bounds(), (std::vector<double>{1, 2}));
}

TEST(Metrics, EscapesHelpAndLabelValues) {
  Metrics m;
  m.GetCounter("esc_total", "Back\\slash and\nnewline \"quoted\".",
               {{"path", "C:\\dir\n\"x\""}})
      ->Add(1);
  EXPECT_EQ(m.Render(),
            "# HELP esc_total Back\\\\slash and\\nnewline \"quoted\".\n"
            "# TYPE esc_total counter\n"
            "esc_total{path=\"C:\\\\dir\\n\\\"x\\\"\"} 1\n");
}

TEST(Metrics, HistogramBucketsAreCumulativeAndInclusive) {
  Metrics m;
  Histogram* h = m.GetHistogram("tick_seconds", "Tick duration.",
                                {2.5, 0.25, 1}, {{"shard", "a"}});
  EXPECT_EQ(h->bounds(), (std::vector<double>{0.25, 1, 2.5}));
  for (double v : {0.125, 0.25, 0.5, 3.0, 100.0}) h->Observe(v);
  h->Observe(std::nan(""));  // ignored
  EXPECT_EQ(h->Counts(), (std::vector<uint64_t>{2, 3, 3, 5}));
  EXPECT_EQ(h->count(), 5u);
  EXPECT_EQ(h->sum(), 103.875);
  EXPECT_EQ(m.Render(),
            "# HELP tick_seconds Tick duration.\n"
            "# TYPE tick_seconds histogram\n"
            "tick_seconds_bucket{shard=\"a\",le=\"0.25\"} 2\n"
            "tick_seconds_bucket{shard=\"a\",le=\"1\"} 3\n"
            "tick_seconds_bucket{shard=\"a\",le=\"2.5\"} 3\n"
            "tick_seconds_bucket{shard=\"a\",le=\"+Inf\"} 5\n"
            "tick_seconds_sum{shard=\"a\"} 103.875\n"
            "tick_seconds_count{shard=\"a\"} 5\n");
}

TEST(Metrics, HistogramWithoutLabels) {
  Metrics m;
  Histogram* h = m.GetHistogram("bytes", "", {1024});
  h->Observe(1);
  EXPECT_EQ(m.Render(),
            "# TYPE bytes histogram\n"
            "bytes_bucket{le=\"1024\"} 1\n"
            "bytes_bucket{le=\"+Inf\"} 1\n"
            "bytes_sum 1\n"
            "bytes_count 1\n");
}

TEST(Metrics, ATypeConflictIsNotRendered) {
  Metrics m;
  m.GetCounter("dup", "D.")->Add(1);
  Gauge* g = m.GetGauge("dup", "D.");
  g->Set(5);  // works, but a name has one type: only the counter is shown
  EXPECT_EQ(m.Render(), "# HELP dup D.\n# TYPE dup counter\ndup 1\n");
}

TEST(Metrics, ConcurrentUpdates) {
  Metrics m;
  Counter* c = m.GetCounter("c_total", "C.");
  Histogram* h = m.GetHistogram("h", "H.", {0.5});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c->Add();
        h->Observe(1.0);
        m.GetGauge("g", "G.", {{"t", "x"}})->Add(1);
      }
    });
  }
  std::string rendered;
  for (int i = 0; i < 10; ++i) rendered = m.Render();  // races with writers
  for (auto& t : threads) t.join();
  EXPECT_EQ(c->value(), 40000u);
  EXPECT_EQ(h->count(), 40000u);
  EXPECT_EQ(h->sum(), 40000.0);
  EXPECT_EQ(m.GetGauge("g", "G.", {{"t", "x"}})->value(), 40000);
}

}  // namespace
}  // namespace tessera
