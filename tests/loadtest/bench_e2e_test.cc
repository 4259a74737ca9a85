// `tessera bench` end to end: the real binary's bots play a `tessera dev`
// of a scratch copy of examples/arena (started once for the suite), joined
// through the dev join or with tickets minted from the dev secret, plain
// and through the delaying proxy; then its reports are merged and plotted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/subprocess.h"
#include "tests/loadtest/dev_copy_test.h"
#include "tests/net/test_client.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kMove[] =
    R"({"move_to":{"x":"$rand:10:700","y":"$rand:10:400"}})";

class BenchE2eTest : public loadtest_e2e::DevCopyTest {
 protected:
  static void SetUpTestSuite() {
    const fs::path app = StartDevCopy("arena", "bench-e2e");
    if (server_ == nullptr) return;
    std::ifstream secrets(app / ".tessera/dev-secrets.json");
    const json j = json::parse(secrets, nullptr, false);
    ASSERT_TRUE(j.is_object());
    ticket_secret_ = new std::string(j.value("ticketSecret", ""));
  }
  static void TearDownTestSuite() {
    DevCopyTest::TearDownTestSuite();
    delete ticket_secret_;
    ticket_secret_ = nullptr;
  }
  void SetUp() override {
    DevCopyTest::SetUp();
    if (ticket_secret_ == nullptr) {
      FAIL() << "no dev secret (see SetUpTestSuite's failure)";
    }
  }

  // The checks every run's report must pass.
  static void ExpectCountsAddUp(const json& r, int bots) {
    ASSERT_TRUE(r.is_object()) << "no report";
    const json& in = r["inputs"];
    EXPECT_EQ(r["bots"]["requested"], bots);
    EXPECT_EQ(r["bots"]["connected"], bots) << r["bots"].dump();
    EXPECT_EQ(r["bots"]["connect_failures"], 0);
    EXPECT_GT(in["sent"].get<int64_t>(), 0);
    EXPECT_GT(in["acked"].get<int64_t>(), 0);
    EXPECT_EQ(in["sent"].get<int64_t>(),
              in["acked"].get<int64_t>() + in["refused"].get<int64_t>() +
                  in["in_flight_at_end"].get<int64_t>() +
                  in["lost"].get<int64_t>())
        << in.dump();
    EXPECT_EQ(in["lost"], 0);
    EXPECT_EQ(r["rtt_ms"]["count"],
              in["acked"].get<int64_t>() + in["refused"].get<int64_t>());
    EXPECT_GT(r["received"]["frames"].get<int64_t>(), 0);
    EXPECT_GT(r["received"]["frames_per_bot_per_sec"].get<double>(), 5.0);
    EXPECT_EQ(r["errors"], 0);
    EXPECT_TRUE(r["bots"]["disconnects"].empty()) << r["bots"].dump();
    EXPECT_GE(r["series"].size(), 2u);  // 2 s runs on a busy machine
  }

  static inline std::string* ticket_secret_ = nullptr;
};

TEST_F(BenchE2eTest, DevJoinRunReportsEveryFigure) {
  const fs::path report = Path("join.json");
  ProcessResult r = Bench({"shard",
                           "--url",
                           Origin(),
                           "--join",
                           Origin() + "/api/dev/join",
                           "--kind",
                           "arena",
                           "--shard-id",
                           "bench-join",
                           "--bots",
                           "5",
                           "--duration",
                           "3",
                           "--rate",
                           "5",
                           "--input",
                           kMove,
                           "--report",
                           report.string(),
                           "--server-pid",
                           std::to_string(server_->pid())});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("5 connected, 0 failed to connect"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("bots connected |"), std::string::npos)
      << "progress line\n"
      << r.output;
  const json j = ReadJson(report);
  ExpectCountsAddUp(j, 5);
  EXPECT_EQ(j["settings"]["join"], Origin() + "/api/dev/join");
  // 5 bots x 5 inputs/s x 3 s, give or take the random start offsets.
  EXPECT_GE(j["inputs"]["sent"].get<int64_t>(), 30);
  EXPECT_LE(j["inputs"]["sent"].get<int64_t>(), 80);
  ASSERT_TRUE(j["server"].is_object());
  EXPECT_GT(j["server"]["cpu_seconds"].get<double>(), 0);
  EXPECT_GT(j["server"]["peak_rss_kib"].get<int64_t>(), 1000);
  EXPECT_GT(j["rtt_ms"]["p50"].get<double>(), 0);
}

TEST_F(BenchE2eTest, MintedTicketsThroughTheDelayProxy) {
  // --shard joins a running shard: create it first.
  Result<net::testing::HttpResult> created = net::testing::HttpCall(
      "127.0.0.1", server_->port(), "POST", "/api/dev/join",
      R"({"shard":"bench-minted","kind":"arena","subscriber":"setup"})",
      {{"Content-Type", "application/json"}});
  ASSERT_TRUE(created.ok() && created->status == 200);

  const fs::path report = Path("delay.json");
  ProcessResult r = Bench({"shard",
                           "--url",
                           Origin(),
                           "--shard",
                           "bench-minted",
                           "--bots",
                           "3",
                           "--duration",
                           "3",
                           "--rate",
                           "4",
                           "--net-delay",
                           "50",
                           "--input",
                           kMove,
                           "--input",
                           R"({"move_to":{"x":"$int:20:30","y":"$bot"}})",
                           "--report",
                           report.string(),
                           "--quiet"},
                          "TESSERA_SHARD_TICKET_SECRET=" + *ticket_secret_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("bots connected |"), std::string::npos)
      << "--quiet prints no progress";
  const json j = ReadJson(report);
  ExpectCountsAddUp(j, 3);
  EXPECT_EQ(j["settings"]["join"], "");
  EXPECT_EQ(j["settings"]["net_delay_ms"], 50);
  // Each input and its answer cross the proxy once: >= 2 x 50 ms.
  EXPECT_GE(j["rtt_ms"]["p50"].get<double>(), 100.0) << j["rtt_ms"].dump();
  EXPECT_GE(j["rtt_ms"]["min"].get<double>(), 100.0) << j["rtt_ms"].dump();
}

TEST_F(BenchE2eTest, WrongSecretAndUnknownShardAreCountedAsConnectFailures) {
  const fs::path report = Path("bad.json");
  ProcessResult r = Bench(
      {"shard", "--url", Origin(), "--shard", "bench-nowhere", "--bots", "2",
       "--duration", "1", "--rate", "0", "--report", report.string()},
      "TESSERA_SHARD_TICKET_SECRET=" + *ticket_secret_);
  EXPECT_EQ(r.exit_code, 1) << r.output;  // no bot joined
  json j = ReadJson(report);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["bots"]["connect_failures"], 2);
  const json& reasons = j["bots"]["connect_failure_reasons"];
  ASSERT_EQ(reasons.size(), 1u) << reasons.dump();
  EXPECT_NE(reasons.begin().key().find("4004"), std::string::npos)
      << reasons.dump();

  r = Bench(
      {"shard", "--url", Origin(), "--shard", "bench-minted", "--bots", "1",
       "--duration", "1", "--rate", "0", "--report", report.string()},
      "TESSERA_SHARD_TICKET_SECRET=not-the-secret");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  j = ReadJson(report);
  EXPECT_NE(j["bots"]["connect_failure_reasons"].dump().find("4001"),
            std::string::npos)
      << j["bots"].dump();
}

TEST_F(BenchE2eTest, UsageErrors) {
  ProcessResult r = Bench({"shard", "--url", Origin(), "--join",
                           "/api/dev/join", "--input", R"("$int:5:1")"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("lower bound 5 is above the upper bound 1"),
            std::string::npos)
      << r.output;
  r = Bench({"shard", "--url", Origin(), "--shard", "x", "--rate", "0"},
            "TESSERA_SHARD_TICKET_SECRET=");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("TESSERA_SHARD_TICKET_SECRET"), std::string::npos);
  r = Bench({"shard", "--url", Origin(), "--rate", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = Bench({"shard", "--join", "/api/dev/join", "--url", Origin()});
  EXPECT_EQ(r.exit_code, 2) << "a rate without templates\n" << r.output;
}

TEST_F(BenchE2eTest, MergeAndPlot) {
  const fs::path a = Path("m-a.json"), b = Path("m-b.json");
  for (const auto& [path, offset] : {std::pair{a, "0"}, std::pair{b, "2"}}) {
    ProcessResult r = Bench({"shard",
                             "--url",
                             Origin(),
                             "--join",
                             "/api/dev/join",
                             "--kind",
                             "arena",
                             "--shard-id",
                             "bench-merge",
                             "--bots",
                             "2",
                             "--bot-offset",
                             offset,
                             "--duration",
                             "2",
                             "--rate",
                             "5",
                             "--input",
                             kMove,
                             "--report",
                             path.string(),
                             "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const fs::path merged = Path("merged.json");
  ProcessResult r =
      Bench({"merge", a.string(), b.string(), "--out", merged.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("on 2 machines"), std::string::npos) << r.output;
  const json ja = ReadJson(a), jb = ReadJson(b), jm = ReadJson(merged);
  ExpectCountsAddUp(jm, 4);
  EXPECT_EQ(jm["machines"], 2);
  EXPECT_EQ(jm["inputs"]["sent"].get<int64_t>(),
            ja["inputs"]["sent"].get<int64_t>() +
                jb["inputs"]["sent"].get<int64_t>());
  EXPECT_EQ(jm["rtt_ms"]["count"].get<int64_t>(),
            ja["rtt_ms"]["count"].get<int64_t>() +
                jb["rtt_ms"]["count"].get<int64_t>());

  const fs::path chart = Path("chart.svg");
  r = Bench({"plot", merged.string(), "--out", chart.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(chart);
  std::stringstream svg;
  svg << in.rdbuf();
  EXPECT_EQ(svg.str().rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.str().find("<polyline"), std::string::npos);
  EXPECT_NE(svg.str().find("</svg>"), std::string::npos);

  r = Bench({"merge", chart.string()});
  EXPECT_EQ(r.exit_code, 1) << "not a report\n" << r.output;
}

}  // namespace
}  // namespace tessera
