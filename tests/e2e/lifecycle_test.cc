// A shard's life across server processes: kill -9 after a save and
// SIGTERM both resume on restart; an idle shard stops and its onStop URL
// hears about it; `tessera serve` refuses to start without secrets.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>

#include "tests/e2e/app_template.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/http_receiver.h"

namespace tessera::e2e {
namespace {

using Clock = std::chrono::steady_clock;

const std::vector<std::pair<std::string, std::string>> kServeEnv = {
    {"TESSERA_SHARD_TICKET_SECRET", "e2e-ticket-secret"},
    {"TESSERA_ADMIN_TOKEN", "e2e-admin-token"},
    {"TESSERA_SHARD_SAVE_SECS", "1"},
};

class LifecycleTest : public E2eTest {
 protected:
  // POST /api/shards/<shard>/tickets (admin) -> the ticket.
  std::string AdminTicket(const std::string& shard,
                          const std::string& subscriber) {
    HttpResult r = Http("POST", "/api/shards/" + shard + "/tickets",
                        {{"subscriber", subscriber}}, /*admin=*/true);
    EXPECT_EQ(r.status, 200) << r.body;
    json body = json::parse(r.body, nullptr, false);
    return body.is_object() ? body.value("ticket", "") : "";
  }
};

TEST_F(LifecycleTest, KillNineAfterASaveThenRestartRestoresTheState) {
  const fs::path app = CopyArena();
  ASSERT_NE(StartServe(app, kServeEnv), nullptr);
  HttpResult created = Http("POST", "/api/shards",
                            {{"kind", "arena"},
                             {"id", "arena-k"},
                             {"params", {{"width", 800}, {"height", 500}}}},
                            /*admin=*/true);
  ASSERT_EQ(created.status, 201) << created.body;
  std::unique_ptr<TestClient> alice =
      Join("arena-k", AdminTicket("arena-k", "alice"));
  ASSERT_NE(alice, nullptr);
  MoveAndExpectAck(*alice, 1, "alice", 123.5, 45.25);
  ASSERT_TRUE(WaitForSaveMentioning(app / ".tessera/tessera.db", "arena-k",
                                    "alice", 10000))
      << "no save within 10 s with TESSERA_SHARD_SAVE_SECS=1";

  ASSERT_TRUE(server()->Signal(SIGKILL).ok());
  Result<int> killed = server()->WaitExit(5000);
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(*killed, 128 + SIGKILL);
  alice.reset();

  ASSERT_NE(StartServe(app, kServeEnv), nullptr);
  HttpResult shard = Http("GET", "/api/shards/arena-k", nullptr, true);
  ASSERT_EQ(shard.status, 200) << shard.body;
  EXPECT_EQ(json::parse(shard.body)["status"], "running") << shard.body;
  std::unique_ptr<TestClient> again =
      Join("arena-k", AdminTicket("arena-k", "alice"));
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(WaitForPlayerAt(*again, "alice", 123.5, 45.25).has_value());
  MoveAndExpectAck(*again, 1, "alice", 1, 1);
}

TEST_F(LifecycleTest, SigtermClosesWith1001ExitsZeroAndRestartRestores) {
  TwoPlayers players = StartArenaWithTwoPlayers();
  const fs::path& app = players.app;
  std::unique_ptr<TestClient>& alice = players.alice;
  std::unique_ptr<TestClient>& bob = players.bob;
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);
  MoveAndExpectAck(*alice, 1, "alice", 42, 24);

  // The closes and the exit are waited for, generously: how fast a
  // shutdown is on a busy machine is no test's business.
  ASSERT_TRUE(server()->Signal(SIGTERM).ok());
  for (TestClient* c : {alice.get(), bob.get()}) {
    const CloseInfo close = ExpectClose(*c, 30000);
    EXPECT_EQ(close.code, kGoingAway) << close.reason;
  }
  Result<int> exit_code = server()->WaitExit(30000);
  ASSERT_TRUE(exit_code.ok()) << exit_code.status().ToString();
  EXPECT_EQ(*exit_code, 0) << server()->Log();

  // The same app directory resumes the shard from the shutdown save.
  ASSERT_NE(StartDev(app), nullptr);
  std::unique_ptr<TestClient> again =
      Join("arena-1", CliTicket(app, "arena-1", "alice"));
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(WaitForPlayerAt(*again, "alice", 42, 24).has_value());
}

TEST_F(LifecycleTest, IdleShutdownPostsToTheOnStopUrlUntilItAnswers) {
  // The receiver refuses the first notice: the server must retry.
  Result<std::unique_ptr<HttpReceiver>> receiver = HttpReceiver::Start(1);
  ASSERT_TRUE(receiver.ok()) << receiver.status().ToString();
  const fs::path app = CopyArena();
  json manifest;
  {
    std::ifstream in(app / "tessera.json");
    manifest = json::parse(in);
  }
  manifest["shards"][0]["idleShutdownSecs"] = 1;
  manifest["shards"][0]["onStop"] =
      "http://127.0.0.1:" + std::to_string((*receiver)->port()) + "/stopped";
  std::ofstream(app / "tessera.json") << manifest.dump();
  ASSERT_NE(StartDev(app), nullptr);

  std::unique_ptr<TestClient> alice =
      Join("arena-idle", DevTicket("arena-idle", "alice"));
  ASSERT_NE(alice, nullptr);
  MoveAndExpectAck(*alice, 1, "alice", 1, 1);
  ASSERT_TRUE(alice->Close().ok());
  const auto left = Clock::now();

  std::vector<ReceivedRequest> posts = (*receiver)->WaitFor(2, 15000);
  ASSERT_EQ(posts.size(), 2u) << "onStop retries missing";
  EXPECT_GE(Clock::now() - left, std::chrono::seconds(1));
  for (const ReceivedRequest& post : posts) {
    EXPECT_EQ(post.method, "POST");
    EXPECT_EQ(post.target, "/stopped");
    const json body = json::parse(post.body, nullptr, false);
    EXPECT_EQ(body["shardId"], "arena-idle") << post.body;
    EXPECT_EQ(body["kind"], "arena") << post.body;
    EXPECT_EQ(body["reason"], "idle") << post.body;
    EXPECT_TRUE(body.contains("error")) << post.body;
  }
  HttpResult detail = Http("GET", "/api/shards/arena-idle", nullptr, true);
  if (detail.status == 200) {
    const json body = json::parse(detail.body);
    EXPECT_EQ(body["status"], "stopped") << detail.body;
    EXPECT_EQ(body["stop_reason"], "idle") << detail.body;
  } else {
    EXPECT_EQ(detail.status, 404) << detail.body;
  }
}

TEST_F(LifecycleTest, ServeRefusesToStartWithoutSecrets) {
  const fs::path app = CopyArena();
  SpawnOptions options;
  options.argv = {TESSERA_BIN, "serve", app.string(), "--port", "0"};
  options.log_path = dir() / "serve.log";
  Result<std::unique_ptr<ServerProcess>> s = ServerProcess::Start(options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("exited with 2"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("TESSERA_SHARD_TICKET_SECRET"),
            std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace tessera::e2e
