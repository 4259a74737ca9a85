// Record and replay with the real binary: `tessera dev` on an arena whose
// kind sets "recordInputs" records a player's moves; `tessera replay` then
// runs those ticks again from the shard's input log and prints, tick by
// tick, the very snapshots the player was sent, each matching the record.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "tests/e2e/e2e_fixture.h"

namespace tessera::e2e {
namespace {

// Sets "recordInputs" on the app's first kind.
void RecordInputs(const fs::path& app) {
  std::ifstream in(app / "tessera.json");
  json manifest = json::parse(in, nullptr, false);
  ASSERT_TRUE(manifest.is_object());
  manifest["shards"][0]["recordInputs"] = true;
  std::ofstream(app / "tessera.json", std::ios::trunc) << manifest.dump();
}

std::vector<json> JsonLines(const std::string& text) {
  std::vector<json> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    json value = json::parse(line, nullptr, false);
    if (!value.is_discarded()) lines.push_back(std::move(value));
  }
  return lines;
}

class ReplayE2eTest : public E2eTest {};

TEST_F(ReplayE2eTest, ReplayPrintsTheRecordedTicksBitForBit) {
  const fs::path app = CopyArena();
  RecordInputs(app);
  ASSERT_NE(StartDev(app), nullptr);
  std::unique_ptr<TestClient> alice =
      Join("arena-1", DevTicket("arena-1", "alice"));
  ASSERT_NE(alice, nullptr);
  MoveAndExpectAck(*alice, 1, "alice", 3, 4);
  MoveAndExpectAck(*alice, 2, "alice", 7, 1);
  // What the player was sent, by tick.
  std::map<uint64_t, json> seen;
  for (int i = 0; i < 6; ++i) {
    Result<net::v1::Frame> frame = alice->ReadUntil<net::v1::Frame>(10000);
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    seen[frame->tick] = Snapshot(*frame);
  }
  const uint64_t from = seen.begin()->first, to = seen.rbegin()->first;

  Result<ProcessResult> r =
      RunProcess({TESSERA_BIN, "replay", app.string(), "--shard", "arena-1",
                  "--from", "1", "--to", std::to_string(to)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 0) << r->output;
  std::vector<json> lines = JsonLines(r->output);
  ASSERT_EQ(lines.size(), to + 1) << r->output;  // ticks + summary

  bool saw_move = false;
  for (uint64_t tick = 1; tick <= to; ++tick) {
    const json& line = lines[tick - 1];
    ASSERT_EQ(line["tick"], tick);
    EXPECT_EQ(line.value("match", false), true) << line.dump();
    EXPECT_EQ(line["fuel"], line["recordedFuel"]);
    EXPECT_GT(line["fuel"].get<int64_t>(), 0);
    if (tick >= from) {
      EXPECT_EQ(line["snapshot"], seen.at(tick)) << "tick " << tick;
    }
    for (const json& in : line["inputs"]) {
      if (in["seq"] == 2 && in["subscriber"] == "alice") {
        saw_move = true;
        EXPECT_EQ(in["input"], json::parse(R"({"move_to":{"x":7,"y":1}})"));
        EXPECT_EQ(in["accepted"], true);
        const json player = FindPlayer(line["snapshot"], "alice");
        EXPECT_EQ(player["x"], 7);
        EXPECT_EQ(player["y"], 1);
      }
    }
  }
  EXPECT_TRUE(saw_move) << r->output;
  const json& summary = lines.back()["replay"];
  EXPECT_EQ(summary["diverged"], 0);
  EXPECT_EQ(summary["startedFrom"], "init");
  EXPECT_EQ(summary["module"], summary["recordedModule"]);

  // A range past what was recorded is refused, saying what the log holds.
  Result<ProcessResult> beyond =
      RunProcess({TESSERA_BIN, "replay", app.string(), "--shard", "arena-1",
                  "--from", "1", "--to", "100000000"});
  ASSERT_TRUE(beyond.ok());
  EXPECT_EQ(beyond->exit_code, 1);
  EXPECT_NE(beyond->output.find("run 1: ticks 1-"), std::string::npos)
      << beyond->output;
}

}  // namespace
}  // namespace tessera::e2e
