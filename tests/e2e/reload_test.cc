// Hot reload through the real `tessera dev`: an edit to the arena's source
// is rebuilt by the server itself and the running shard moves to the new
// code with both players connected (state carried over, the new behaviour
// visible at once); a source that does not compile changes nothing; the
// reload route's errors.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tests/e2e/e2e_fixture.h"

namespace tessera::e2e {
namespace {

using net::v1::Frame;
using net::v1::Reject;

class ReloadTest : public E2eTest {
 protected:
  static fs::path Source(const fs::path& app) {
    return app / "shards" / "arena" / "arena.cc";
  }
  // Replaces `from` by `to` in the arena's source (fails the test if
  // absent).
  static void Edit(const fs::path& app, const std::string& from,
                   const std::string& to) {
    std::ifstream in(Source(app));
    std::stringstream text;
    text << in.rdbuf();
    std::string source = text.str();
    const size_t at = source.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    source.replace(at, from.size(), to);
    std::ofstream(Source(app), std::ios::trunc) << source;
  }

  // Polls GET /api/kinds/arena until its reload is done or failed. The
  // players read meanwhile, as a client would (their WebSockets answer the
  // server's pings), so a long build never makes them look gone.
  json WaitForReload(const TwoPlayers* players, uint64_t after_id = 0) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(180);
    while (std::chrono::steady_clock::now() < deadline) {
      HttpResult r = Http("GET", "/api/kinds/arena", nullptr, true);
      EXPECT_EQ(r.status, 200) << r.body;
      json kind = json::parse(r.body, nullptr, false);
      const json& reload = kind["reload"];
      if (reload.is_object() && reload["id"].get<uint64_t>() > after_id &&
          (reload["state"] == "done" || reload["state"] == "failed")) {
        return kind;
      }
      if (players == nullptr) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      for (TestClient* c : {players->alice.get(), players->bob.get()}) {
        if (c == nullptr) continue;
        for (int i = 0; i < 50; ++i) {
          Result<net::client::ClientEvent> event = c->Read(2);
          if (!event.ok()) break;  // nothing waiting
          EXPECT_FALSE(event->closed) << event->close.reason;
          if (event->closed) return nullptr;
        }
      }
    }
    ADD_FAILURE() << "no reload finished; log:\n" << server()->Log();
    return nullptr;
  }
};

TEST_F(ReloadTest, AnEditedSourceSwapsTheShardUnderConnectedPlayers) {
  TwoPlayers game = StartArenaWithTwoPlayers();
  ASSERT_NE(game.alice, nullptr);
  ASSERT_NE(game.bob, nullptr);
  MoveAndExpectAck(*game.alice, 1, "alice", 3, 4);
  const std::string old_version = json::parse(
      Http("GET", "/api/shards/arena-1", nullptr, true).body)["module"];
  ASSERT_FALSE(old_version.empty());

  // The new code refuses moves outside with another text.
  Edit(game.app, "\"outside the arena\"", "\"outside the arena (v2)\"");
  const json kind = WaitForReload(&game);
  ASSERT_TRUE(kind.is_object());
  ASSERT_EQ(kind["reload"]["state"], "done") << kind.dump();
  ASSERT_EQ(kind["reload"]["shards"].size(), 1u) << kind.dump();
  EXPECT_EQ(kind["reload"]["shards"][0]["id"], "arena-1");
  EXPECT_EQ(kind["reload"]["shards"][0]["reloaded"], true) << kind.dump();
  const std::string new_version = kind["version"];
  EXPECT_NE(new_version, old_version);
  // In dev the shard ran a quick build first (-O0, Tiny C), then the
  // optimised one that followed.
  ASSERT_TRUE(kind["reload"]["quick"].is_object()) << kind.dump();
  const std::string quick_version = kind["reload"]["quick"]["version"];
  EXPECT_EQ(quick_version.size(), 12u);
  EXPECT_NE(quick_version, new_version);
  EXPECT_NE(quick_version, old_version);
  EXPECT_GT(kind["reload"]["quick"]["ms"].get<int64_t>(), 0);
  EXPECT_NE(server()->Log().find("reload arena: quick build " + quick_version +
                                 " running in "),
            std::string::npos)
      << server()->Log();
  const json shard =
      json::parse(Http("GET", "/api/shards/arena-1", nullptr, true).body);
  EXPECT_EQ(shard["module"], new_version);
  EXPECT_EQ(shard["subscribers"], 2);

  // Nobody was disconnected; alice is still at (3, 4) for both of them,
  // and the new behaviour shows at once.
  ASSERT_TRUE(WaitForPlayerAt(*game.bob, "alice", 3, 4).has_value());
  ASSERT_TRUE(WaitForPlayerAt(*game.alice, "alice", 3, 4).has_value());
  ASSERT_TRUE(game.alice->SendInput(2, MoveTo(-1, 0)).ok());
  Result<Reject> reject = game.alice->ReadUntil<Reject>(10000);
  ASSERT_TRUE(reject.ok()) << reject.status().ToString();
  EXPECT_EQ(reject->error, "outside the arena (v2)");
  MoveAndExpectAck(*game.alice, 3, "alice", 7, 8);
  ASSERT_TRUE(WaitForPlayerAt(*game.bob, "alice", 7, 8).has_value());
  EXPECT_TRUE(KeepsReceivingFrames(*game.bob));
  EXPECT_NE(server()->Log().find("reload arena: " + new_version +
                                 ", 1 of 1 running shards moved in "),
            std::string::npos)
      << server()->Log();
}

TEST_F(ReloadTest, ASourceThatDoesNotCompileKeepsTheOldCodeRunning) {
  TwoPlayers game = StartArenaWithTwoPlayers();
  ASSERT_NE(game.alice, nullptr);
  const std::string old_version = json::parse(
      Http("GET", "/api/shards/arena-1", nullptr, true).body)["module"];
  Edit(game.app, "return tessera::Error(\"outside the arena\");",
       "return this_does_not_compile;");
  const json kind = WaitForReload(&game);
  ASSERT_TRUE(kind.is_object());
  EXPECT_EQ(kind["reload"]["state"], "failed") << kind.dump();
  EXPECT_NE(
      kind["reload"]["error"].get<std::string>().find("this_does_not_compile"),
      std::string::npos)
      << kind.dump();
  EXPECT_EQ(kind["version"], old_version);
  // The old code goes on: the old refusal, a move, frames to both.
  ASSERT_TRUE(game.alice->SendInput(1, MoveTo(-1, 0)).ok());
  Result<Reject> reject = game.alice->ReadUntil<Reject>(10000);
  ASSERT_TRUE(reject.ok()) << reject.status().ToString();
  EXPECT_EQ(reject->error, "outside the arena");
  MoveAndExpectAck(*game.alice, 2, "alice", 5, 5);
  EXPECT_TRUE(KeepsReceivingFrames(*game.bob));
  EXPECT_NE(server()->Log().find("reload arena failed"), std::string::npos);

  // Fixing the source reloads again, by the route this time too.
  Edit(game.app, "return this_does_not_compile;",
       "return tessera::Error(\"outside the arena\");");
  const json fixed = WaitForReload(&game, kind["reload"]["id"].get<uint64_t>());
  ASSERT_TRUE(fixed.is_object());
  EXPECT_EQ(fixed["reload"]["state"], "done") << fixed.dump();
  HttpResult again = Http("POST", "/api/kinds/arena/reload", nullptr, true);
  EXPECT_EQ(again.status, 202) << again.body;
  const json same = WaitForReload(&game, fixed["reload"]["id"].get<uint64_t>());
  EXPECT_EQ(same["reload"]["state"], "done") << same.dump();
  EXPECT_EQ(same["version"], fixed["version"]);  // nothing new to build
  EXPECT_TRUE(same["reload"]["quick"].is_null()) << same.dump();
}

TEST_F(ReloadTest, TheRouteNeedsTheTokenAndAKnownKind) {
  ASSERT_NE(StartDev(CopyArena()), nullptr);
  EXPECT_EQ(Http("POST", "/api/kinds/arena/reload").status, 401);
  EXPECT_EQ(Http("POST", "/api/kinds/nope/reload", nullptr, true).status, 404);
  EXPECT_EQ(Http("GET", "/api/kinds/arena/reload", nullptr, true).status, 405);
  HttpResult all = Http("GET", "/api/kinds", nullptr, true);
  ASSERT_EQ(all.status, 200) << all.body;
  const json kinds = json::parse(all.body);
  ASSERT_EQ(kinds.size(), 1u) << all.body;
  EXPECT_EQ(kinds[0]["kind"], "arena");
  EXPECT_TRUE(kinds[0]["reload"].is_null());
  EXPECT_EQ(kinds[0]["version"].get<std::string>().size(), 12u);
}

}  // namespace
}  // namespace tessera::e2e
