// Lag compensation end to end: a `tessera dev` of a scratch copy of
// examples/range (one target sliding at a constant 200 units/s), and
// `tessera bench shard --aim 1` bots behind 100 +- 20 ms of proxy delay each
// way shooting where they draw the target. With 10 ticks of history the
// shard checks each shot against the picture the bot drew: >= 99% hit.
// Without (history 0) the target has moved ~60 units (three radii) by the
// time the shot is checked: most shots miss. Both are asserted, so the test
// shows what the feature does.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/subprocess.h"
#include "tests/loadtest/dev_copy_test.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kShoot[] = R"({"shoot":{"aim":["$aim:x","$aim:y"]}})";

class RangeE2eTest : public loadtest_e2e::DevCopyTest {
 protected:
  static void SetUpTestSuite() { StartDevCopy("range", "range-e2e"); }

  // Runs the aimed bench against a fresh shard with `history` ticks of
  // lag compensation; returns the report's "aimed" object.
  static json AimedRun(const std::string& shard, int history) {
    const fs::path report = Path(shard + ".json");
    const ProcessResult r =
        Bench({"shard",
               "--url",
               Origin(),
               "--join",
               "/api/dev/join",
               "--kind",
               "range",
               "--shard-id",
               shard,
               "--join-args",
               R"({"params":{"targets":1,"speed":200,"history":)" +
                   std::to_string(history) + "}}",
               "--bots",
               "4",
               "--duration",
               "6",
               "--rate",
               "5",
               "--net-delay",
               "100",
               "--net-jitter",
               "20",
               "--aim",
               "1",
               "--input",
               kShoot,
               "--report",
               report.string(),
               "--quiet"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const json j = ReadJson(report);
    EXPECT_TRUE(j.is_object()) << r.output;
    if (!j.is_object()) return nullptr;
    EXPECT_EQ(j["bots"]["connected"], 4) << r.output;
    EXPECT_EQ(j["settings"]["aim"], "1");
    const json& aimed = j["aimed"];
    // 4 bots x 5 shots/s for ~5 s once the target is drawn.
    EXPECT_GE(aimed["sent"].get<int64_t>(), 60) << aimed.dump();
    EXPECT_GE(aimed["acked"].get<int64_t>() + aimed["refused"].get<int64_t>(),
              aimed["sent"].get<int64_t>() - 8)
        << "nearly every shot answered: " << aimed.dump();
    return aimed;
  }

  static double HitRate(const json& aimed) {
    const double acked = aimed["acked"].get<double>();
    const double answered = acked + aimed["refused"].get<double>();
    return answered > 0 ? acked / answered : 0;
  }
};

TEST_F(RangeE2eTest, WithTenTicksOfHistoryAimedShotsHit) {
  const json aimed = AimedRun("range-h10", 10);
  ASSERT_TRUE(aimed.is_object());
  std::cout << "history 10: " << HitRate(aimed) * 100 << "% hit, "
            << aimed.dump() << "\n";
  EXPECT_GE(HitRate(aimed), 0.99) << aimed.dump();
  // Refusals, if any, are misses (not malformed shots or rate limits).
  for (auto it = aimed["refusals"].begin(); it != aimed["refusals"].end();
       ++it) {
    EXPECT_EQ(it.key(), "miss") << aimed.dump();
  }
}

TEST_F(RangeE2eTest, WithoutHistoryMostAimedShotsMiss) {
  const json aimed = AimedRun("range-h0", 0);
  ASSERT_TRUE(aimed.is_object());
  std::cout << "history 0: " << HitRate(aimed) * 100 << "% hit, "
            << aimed.dump() << "\n";
  EXPECT_LT(HitRate(aimed), 0.5) << aimed.dump();
  EXPECT_GT(aimed["refusals"].value("miss", 0), 0) << aimed.dump();
}

}  // namespace
}  // namespace tessera
