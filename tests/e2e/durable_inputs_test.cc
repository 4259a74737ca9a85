// No acknowledged input lost (docs/record-replay.md): the real `tessera
// serve`, saving every second, runs a counter shard whose kind records its
// inputs; three bots add 1 each as fast as their ACKs come back, the server
// is killed with SIGKILL mid-stream, and after a restart on the same app
// the shard's value counts every input that was acknowledged (and no more
// than were sent). Without the log it would come back from its last save,
// short of up to a second of acknowledged inputs.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/e2e/e2e_fixture.h"

namespace tessera::e2e {
namespace {

using Clock = std::chrono::steady_clock;

class DurableInputsE2eTest : public E2eTest {
 protected:
  fs::path MakeApp() {
    const fs::path app = dir() / "durable-app";
    fs::create_directories(app);
    json manifest = {{"name", "durable"},
                     {"shards",
                      {{{"name", "counter"},
                        {"wasm", TESSERA_GUEST_COUNTER},
                        {"idleShutdownSecs", 0},
                        {"recordInputs", true}}}}};
    std::ofstream(app / "tessera.json") << manifest.dump();
    return app;
  }
  ServerProcess* Serve(const fs::path& app) {
    return StartServe(app, {{"TESSERA_SHARD_TICKET_SECRET", "durable-secret"},
                            {"TESSERA_ADMIN_TOKEN", "durable-admin"},
                            {"TESSERA_SHARD_SAVE_SECS", "1"}});
  }
  std::string Ticket(const std::string& subscriber) {
    HttpResult r = Http("POST", "/api/shards/c1/tickets",
                        json{{"subscriber", subscriber}}, true);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body, nullptr, false).value("ticket", "");
  }
};

TEST_F(DurableInputsE2eTest, KillNineLosesNoAcknowledgedInput) {
  const fs::path app = MakeApp();
  ASSERT_NE(Serve(app), nullptr);
  HttpResult created =
      Http("POST", "/api/shards",
           json{{"kind", "counter"}, {"id", "c1"}, {"params", {{"start", 0}}}},
           true);
  ASSERT_EQ(created.status, 201) << created.body;

  std::vector<std::unique_ptr<TestClient>> bots;
  for (int i = 0; i < 3; ++i) {
    bots.push_back(Join("c1", Ticket("bot-" + std::to_string(i))));
    ASSERT_NE(bots.back(), nullptr);
  }
  const std::string add = Msgpack({{"add", {{"n", 1}}}});
  std::vector<uint64_t> seq(bots.size(), 0);
  uint64_t sent = 0, acked = 0;
  // 2.5 s of play: saves every second, so the kill lands between two.
  const auto until = Clock::now() + std::chrono::milliseconds(2500);
  while (Clock::now() < until) {
    for (size_t b = 0; b < bots.size(); ++b) {
      ASSERT_TRUE(bots[b]->SendInput(++seq[b], add).ok());
      ++sent;
    }
    for (size_t b = 0; b < bots.size(); ++b) {
      for (;;) {
        Result<net::v1::ServerMessage> msg = bots[b]->ReadMessage(10000);
        ASSERT_TRUE(msg.ok()) << msg.status().ToString();
        if (auto* ack = std::get_if<net::v1::Ack>(&*msg)) {
          if (ack->seq == seq[b]) break;
        }
        ASSERT_EQ(std::get_if<net::v1::Reject>(&*msg), nullptr);
      }
      ++acked;
    }
  }
  // More in flight, then the kill.
  for (size_t b = 0; b < bots.size(); ++b) {
    ASSERT_TRUE(bots[b]->SendInput(++seq[b], add).ok());
    ++sent;
  }
  ASSERT_TRUE(server()->Signal(SIGKILL).ok());
  ASSERT_TRUE(server()->WaitExit(10000).ok());
  bots.clear();

  ASSERT_NE(Serve(app), nullptr);
  std::unique_ptr<TestClient> watcher = Join("c1", Ticket("watcher"));
  ASSERT_NE(watcher, nullptr);
  Result<net::v1::Frame> frame = watcher->ReadUntil<net::v1::Frame>(10000);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  const json snapshot = Snapshot(*frame);
  const int64_t value = snapshot["value"].get<int64_t>();
  EXPECT_GE(value, static_cast<int64_t>(acked))
      << "acked " << acked << ", sent " << sent << "; log:\n"
      << server()->Log();
  EXPECT_LE(value, static_cast<int64_t>(sent));
  EXPECT_NE(server()->Log().find("logged ticks since its save again"),
            std::string::npos)
      << server()->Log();
}

}  // namespace
}  // namespace tessera::e2e
