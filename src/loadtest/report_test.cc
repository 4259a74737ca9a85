#include "loadtest/report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace tessera::loadtest {
namespace {

// A report of `bots` bots whose round trips are drawn around `median_us`;
// `all` collects every sample.
Report MakeReport(int64_t bots, double median_us, uint64_t seed,
                  std::vector<uint64_t>* all) {
  Report r;
  r.settings.url = "http://127.0.0.1:4321";
  r.settings.bots = bots;
  r.settings.rate = 10;
  r.settings.duration_secs = 3;
  r.settings.threads = 2;
  r.elapsed_secs = 3.2;
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> rtt(std::log(median_us), 0.5);
  Counts& c = r.counts;
  c.bots_connected = static_cast<uint64_t>(bots) - 1;
  c.connect_failures = 1;
  c.connect_failure_reasons["connect: Connection refused"] = 1;
  c.disconnects["4006"] = 2;
  for (int64_t t = 0; t < 3; ++t) {
    SeriesPoint p;
    p.t = t;
    p.connected = c.bots_connected;
    for (int i = 0; i < 300; ++i) {
      const uint64_t v = static_cast<uint64_t>(rtt(rng));
      all->push_back(v);
      p.rtt_us.Record(v);
      c.rtt_us.Record(v);
      ++p.sent;
      ++p.acked;
    }
    p.bytes = 1000;
    p.frames = 20;
    r.series.push_back(p);
  }
  c.inputs_sent = 905;
  c.inputs_acked = 900;
  c.inputs_refused = 3;
  c.refusals["outside the arena"] = 3;
  c.in_flight_at_end = 2;
  c.aimed.sent = 40;
  c.aimed.acked = 37;
  c.aimed.refused = 2;
  c.aimed.refusals["miss"] = 2;
  c.aimed.not_drawn = 5;
  c.transfers.followed = 4;
  c.transfers.failed = 1;
  c.transfers.failures["connect: Connection refused"] = 1;
  for (uint64_t ms : {60, 70, 80, 150}) {
    c.transfers.time_us.Record(ms * 1000);
    c.transfers.notice_us.Record(40000);
    c.transfers.reconnect_us.Record(ms * 1000 - 40000);
  }
  for (int64_t i = 0; i < bots; ++i) {
    c.first_frame_us.Record(static_cast<uint64_t>(20000 + 1000 * i));
  }
  c.frames = 60;
  c.bytes = 3000;
  c.bot_seconds = 3.0 * static_cast<double>(bots);
  r.server = ServerUsage{1234, 0.5, 40000};
  r.client_cpu_seconds = 0.25;
  return r;
}

uint64_t Exact(std::vector<uint64_t> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * v.size()));
  return v[std::max<size_t>(rank, 1) - 1];
}

TEST(ReportTest, JsonRoundTripKeepsEveryFigure) {
  std::vector<uint64_t> all;
  Report r = MakeReport(5, 20000, 1, &all);
  r.settings.inputs = {R"({"move_to":{"x":"$rand:1:2"}})"};
  const nlohmann::json j = ReportToJson(r);
  EXPECT_EQ(j["format"], "tessera-bench-report");
  EXPECT_EQ(j["inputs"]["sent"], 905);
  EXPECT_EQ(j["bots"]["connect_failure_reasons"]["connect: Connection refused"],
            1);
  EXPECT_EQ(j["series"].size(), 3u);
  EXPECT_GT(j["rtt_ms"]["p99"].get<double>(), j["rtt_ms"]["p50"].get<double>());
  EXPECT_EQ(j["server"]["peak_rss_kib"], 40000);
  EXPECT_EQ(j["aimed"]["refusals"]["miss"], 2);
  EXPECT_EQ(j["aimed"]["not_drawn"], 5);
  EXPECT_EQ(j["transfers"]["followed"], 4);
  EXPECT_EQ(j["transfers"]["failed"], 1);
  EXPECT_EQ(j["transfers"]["failures"]["connect: Connection refused"], 1);
  EXPECT_NEAR(j["transfers"]["time_ms"]["p50"].get<double>(), 70, 0.6);
  EXPECT_NEAR(j["transfers"]["reconnect_ms"]["max"].get<double>(), 110, 0.6);
  EXPECT_NEAR(j["transfers"]["notice_ms"]["p99"].get<double>(), 40, 0.3);
  EXPECT_EQ(j["first_frame_ms"]["count"], 5);
  r.settings.aim = "1";
  r.settings.interp_delay_ms = 100;
  r.settings.tick_rate = 20;
  const nlohmann::json aimed = ReportToJson(r);
  EXPECT_EQ(aimed["settings"]["aim"], "1");
  Result<Report> aimed_back = ReportFromJson(aimed);
  ASSERT_TRUE(aimed_back.ok()) << aimed_back.status().ToString();
  EXPECT_EQ(ReportToJson(*aimed_back), aimed);
  EXPECT_NE(FormatSummary(r).find("aimed:      40 shots at entity 1 sent, "
                                  "37 acked, 2 refused (94.9% of the 39 "
                                  "answered acked), 5 times not drawn"),
            std::string::npos)
      << FormatSummary(r);
  // Reports written before --aim existed still read.
  nlohmann::json old = j;
  old.erase("aimed");
  old["settings"].erase("aim");
  old["settings"].erase("interp_delay_ms");
  old["settings"].erase("tick_rate");
  ASSERT_TRUE(ReportFromJson(old).ok());
  // And those written before transfers were counted.
  old.erase("transfers");
  old.erase("first_frame_ms");
  old.erase("first_frame_histogram_us");
  Result<Report> older = ReportFromJson(old);
  ASSERT_TRUE(older.ok()) << older.status().ToString();
  EXPECT_EQ(older->counts.transfers.followed, 0u);
  EXPECT_EQ(older->counts.first_frame_us.count(), 0u);
  nlohmann::json bad = j;
  bad["transfers"]["followed"] = "four";
  EXPECT_FALSE(ReportFromJson(bad).ok());

  Result<Report> back = ReportFromJson(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ReportToJson(*back), j);
}

TEST(ReportTest, MalformedReportsAreRefused) {
  EXPECT_FALSE(ReportFromJson(nlohmann::json::object()).ok());
  std::vector<uint64_t> all;
  nlohmann::json j = ReportToJson(MakeReport(2, 1000, 2, &all));
  j["inputs"]["acked"] = "many";
  Result<Report> r = ReportFromJson(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("inputs.acked"), std::string::npos)
      << r.status().message();
  j = ReportToJson(MakeReport(2, 1000, 2, &all));
  j.erase("series");
  EXPECT_FALSE(ReportFromJson(j).ok());
}

TEST(ReportTest, MergeAddsCountsAndMergesDistributions) {
  std::vector<uint64_t> all;
  Report a = MakeReport(5, 10000, 1, &all);
  Report b = MakeReport(7, 40000, 2, &all);
  SeriesPoint late;
  late.t = 3;
  late.connected = 6;
  late.sent = 1;
  b.series.push_back(late);
  b.server->cpu_seconds = 0.8;
  Result<Report> merged = MergeReports({a, b});
  ASSERT_TRUE(merged.ok());
  const Counts& c = merged->counts;
  EXPECT_EQ(merged->machines, 2);
  EXPECT_EQ(merged->settings.bots, 12);
  EXPECT_EQ(c.bots_connected, 10u);
  EXPECT_EQ(c.connect_failures, 2u);
  EXPECT_EQ(c.connect_failure_reasons.at("connect: Connection refused"), 2u);
  EXPECT_EQ(c.disconnects.at("4006"), 4u);
  EXPECT_EQ(c.inputs_sent, 1810u);
  EXPECT_EQ(c.inputs_acked, 1800u);
  EXPECT_EQ(c.refusals.at("outside the arena"), 6u);
  EXPECT_EQ(c.in_flight_at_end, 4u);
  EXPECT_EQ(c.aimed.sent, 80u);
  EXPECT_EQ(c.aimed.acked, 74u);
  EXPECT_EQ(c.aimed.refusals.at("miss"), 4u);
  EXPECT_EQ(c.aimed.not_drawn, 10u);
  EXPECT_EQ(c.transfers.followed, 8u);
  EXPECT_EQ(c.transfers.failed, 2u);
  EXPECT_EQ(c.transfers.failures.at("connect: Connection refused"), 2u);
  EXPECT_EQ(c.transfers.time_us.count(), 8u);
  EXPECT_EQ(c.transfers.reconnect_us.count(), 8u);
  EXPECT_EQ(c.transfers.notice_us.count(), 8u);
  EXPECT_EQ(c.first_frame_us.count(), 12u);
  EXPECT_DOUBLE_EQ(c.bot_seconds, 36.0);
  EXPECT_DOUBLE_EQ(merged->server->cpu_seconds, 0.8);  // the same server
  EXPECT_DOUBLE_EQ(merged->client_cpu_seconds, 0.5);
  // Percentiles of the merge are those of the union of the samples.
  ASSERT_EQ(c.rtt_us.count(), all.size());
  for (double p : {50.0, 90.0, 99.0}) {
    const double exact = static_cast<double>(Exact(all, p));
    EXPECT_NEAR(static_cast<double>(c.rtt_us.Percentile(p)), exact,
                exact / 128 + 1)
        << p;
  }
  // Series add second by second.
  ASSERT_EQ(merged->series.size(), 4u);
  EXPECT_EQ(merged->series[0].sent, 600u);
  EXPECT_EQ(merged->series[0].connected, 10u);
  EXPECT_EQ(merged->series[0].rtt_us.count(), 600u);
  EXPECT_EQ(merged->series[3].sent, 1u);
  // Merging survives the JSON form.
  Result<Report> a2 = ReportFromJson(ReportToJson(a));
  Result<Report> b2 = ReportFromJson(ReportToJson(b));
  ASSERT_TRUE(a2.ok() && b2.ok());
  Result<Report> merged2 = MergeReports({*a2, *b2});
  ASSERT_TRUE(merged2.ok());
  EXPECT_EQ(ReportToJson(*merged2), ReportToJson(*merged));

  EXPECT_FALSE(MergeReports({}).ok());
}

TEST(ReportTest, SummaryNamesTheFigures) {
  std::vector<uint64_t> all;
  const std::string text = FormatSummary(MakeReport(5, 20000, 1, &all));
  EXPECT_NE(text.find("4 connected, 1 failed"), std::string::npos) << text;
  EXPECT_NE(text.find("905 sent"), std::string::npos) << text;
  EXPECT_NE(text.find("p99"), std::string::npos);
  EXPECT_NE(text.find("4006 shard_stopped"), std::string::npos) << text;
  EXPECT_NE(text.find("outside the arena"), std::string::npos);
  EXPECT_NE(text.find("peak RSS"), std::string::npos);
  EXPECT_NE(text.find("transfers:  4 followed, 1 failed; p50 69.9 ms, p99 "
                      "150.0 ms"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("of which to the TRANSFER p50 40.0 ms"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("first FRAME: p50 22."), std::string::npos) << text;
  EXPECT_EQ(CloseCodeName("4011"), "4011 transferred");
}

}  // namespace
}  // namespace tessera::loadtest
