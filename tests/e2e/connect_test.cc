// `tessera connect` against the real `tessera dev`: what a newcomer sees
// after the printed join line (the WELCOME, decoded FRAMEs, the answers to
// its inputs, the close), and the errors for a refused join or a bad
// option.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/subprocess.h"
#include "tests/e2e/e2e_fixture.h"

namespace tessera::e2e {
namespace {

// The printed lines, each split into its keyword and its JSON object.
std::vector<std::pair<std::string, json>> Lines(const std::string& output) {
  std::vector<std::pair<std::string, json>> lines;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    const size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    json body = json::parse(line.substr(space + 1), nullptr, false);
    if (body.is_discarded()) continue;
    lines.emplace_back(line.substr(0, space), std::move(body));
  }
  return lines;
}

std::vector<json> Of(const std::vector<std::pair<std::string, json>>& lines,
                     const std::string& keyword) {
  std::vector<json> out;
  for (const auto& [k, body] : lines) {
    if (k == keyword) out.push_back(body);
  }
  return out;
}

class ConnectTest : public E2eTest {
 protected:
  ProcessResult Connect(std::vector<std::string> args) {
    std::vector<std::string> argv = {
        TESSERA_BIN, "connect", "--url",
        "http://127.0.0.1:" + std::to_string(port())};
    argv.insert(argv.end(), args.begin(), args.end());
    Result<ProcessResult> r = RunProcess(argv);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ProcessResult{};
  }
};

TEST_F(ConnectTest, JoinsMovesAndPrintsEachFrameDecoded) {
  ASSERT_NE(StartDev(CopyArena()), nullptr);
  ProcessResult r =
      Connect({"--shard", "arena-1", "--kind", "arena", "--subscriber", "carol",
               "--send", R"({"move_to":{"x":3,"y":4}})", "--send",
               R"({"move_to":{"x":-5,"y":0}})", "--frames", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto lines = Lines(r.output);

  ASSERT_FALSE(lines.empty()) << r.output;
  EXPECT_EQ(lines.front().first, "WELCOME") << r.output;
  const json welcome = lines.front().second;
  EXPECT_EQ(welcome["shard"], "arena-1");
  EXPECT_EQ(welcome["subscriber"], "carol");
  EXPECT_EQ(welcome["codec"], "msgpack");
  EXPECT_EQ(welcome["tickRate"], 20);

  const std::vector<json> inputs = Of(lines, "INPUT");
  ASSERT_EQ(inputs.size(), 2u) << r.output;
  EXPECT_EQ(inputs[0]["seq"], 1);
  EXPECT_EQ(inputs[0]["payload"]["move_to"]["x"], 3);

  const std::vector<json> acks = Of(lines, "ACK");
  ASSERT_EQ(acks.size(), 1u) << r.output;
  EXPECT_EQ(acks[0]["seq"], 1);
  const std::vector<json> rejects = Of(lines, "REJECT");
  ASSERT_EQ(rejects.size(), 1u) << r.output;
  EXPECT_EQ(rejects[0]["seq"], 2);
  EXPECT_EQ(rejects[0]["error"], "outside the arena");

  // Exactly --frames FRAMEs, their MessagePack snapshots shown as JSON,
  // carol at (3, 4) once her move applied.
  const std::vector<json> frames = Of(lines, "FRAME");
  ASSERT_EQ(frames.size(), 20u) << r.output;
  bool carol_seen = false;
  for (const json& frame : frames) {
    ASSERT_TRUE(frame["snapshot"].contains("players")) << frame.dump();
    for (const json& player : frame["snapshot"]["players"]) {
      if (player["id"] == "carol" && player["x"] == 3 && player["y"] == 4) {
        carol_seen = true;
        EXPECT_GE(frame["lastSeq"].get<int>(), 1);
      }
    }
  }
  EXPECT_TRUE(carol_seen) << r.output;
  EXPECT_LT(frames.front()["tick"], frames.back()["tick"]);
}

TEST_F(ConnectTest, JoinsWithATicketFromTesseraTicket) {
  const fs::path app = CopyArena();
  ASSERT_NE(StartDev(app), nullptr);
  DevJoin("arena-1", "alice");  // starts the shard
  const std::string ticket = CliTicket(app, "arena-1", "dave");
  ProcessResult r =
      Connect({"--shard", "arena-1", "--ticket", ticket, "--frames", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto lines = Lines(r.output);
  ASSERT_EQ(Of(lines, "WELCOME").size(), 1u) << r.output;
  EXPECT_EQ(Of(lines, "WELCOME")[0]["subscriber"], "dave");
  EXPECT_EQ(Of(lines, "FRAME").size(), 3u) << r.output;
}

TEST_F(ConnectTest, ARefusedJoinOrClosedConnectionExitsWithOne) {
  const fs::path app = CopyArena();
  ASSERT_NE(StartDev(app), nullptr);
  ProcessResult refused =
      Connect({"--shard", "x-1", "--kind", "nope", "--frames", "1"});
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("join refused: HTTP 4"), std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("nope"), std::string::npos) << refused.output;

  // A valid ticket for a shard that does not run: the server's close.
  const std::string ticket = CliTicket(app, "ghost", "dave");
  ProcessResult closed =
      Connect({"--shard", "ghost", "--ticket", ticket, "--frames", "1"});
  EXPECT_EQ(closed.exit_code, 1) << closed.output;
  const std::vector<json> close = Of(Lines(closed.output), "CLOSED");
  ASSERT_EQ(close.size(), 1u) << closed.output;
  EXPECT_EQ(close[0]["code"], kShardNotFound);
}

// The banner's next steps work as printed: the connect line, and the admin
// curl with the token.
TEST_F(ConnectTest, TheBannerNamesConnectAndAWorkingAdminCall) {
  ASSERT_NE(StartDev(CopyArena()), nullptr);
  const std::string base = "http://127.0.0.1:" + std::to_string(port());
  const std::string log = server()->Log();
  const std::string connect_line = "tessera connect --url " + base +
                                   " --shard arena-1 --kind arena --frames 5";
  EXPECT_NE(log.find(connect_line), std::string::npos) << log;
  const std::string admin_line =
      "admin API:   curl -s -H 'Authorization: "
      "Bearer " +
      admin_token() + "' " + base + "/api/shards";
  EXPECT_NE(log.find(admin_line), std::string::npos) << log;
  EXPECT_NE(log.find(base + "/metrics"), std::string::npos) << log;

  ProcessResult r =
      Connect({"--shard", "arena-1", "--kind", "arena", "--frames", "5"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Of(Lines(r.output), "FRAME").size(), 5u) << r.output;
  HttpResult shards = Http("GET", "/api/shards", nullptr, /*admin=*/true);
  EXPECT_EQ(shards.status, 200);
  EXPECT_NE(shards.body.find("arena-1"), std::string::npos) << shards.body;
}

TEST_F(ConnectTest, BadOptionsAreRefusedBeforeAnythingIsSent) {
  ASSERT_NE(StartDev(CopyArena()), nullptr);
  ProcessResult bad_send =
      Connect({"--shard", "arena-1", "--kind", "arena", "--send", "{move"});
  EXPECT_EQ(bad_send.exit_code, 2);
  EXPECT_NE(bad_send.output.find("--send must be JSON"), std::string::npos)
      << bad_send.output;
  ProcessResult no_shard = Connect({"--kind", "arena"});
  EXPECT_EQ(no_shard.exit_code, 2);
  EXPECT_NE(no_shard.output.find("--shard is required"), std::string::npos)
      << no_shard.output;
  // Nothing was created by the refused calls.
  HttpResult shards = Http("GET", "/api/shards", nullptr, true);
  EXPECT_EQ(shards.body.find("arena-1"), std::string::npos) << shards.body;
}

}  // namespace
}  // namespace tessera::e2e
