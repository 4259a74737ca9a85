// The admin API's moves and messages between shards: POST
// /api/shards/<from>/transfer (its outcome as a status and code, the wait
// for it and its 504) and POST /api/publish (targets, data forms, counts),
// over the real host of the fixture (api_handler_test_fixture.h) with the
// `counter` guest (no transfer hooks, no on_messages) and the `talk` guest.
#include <future>
#include <string>

#include "server/api_handler_test_fixture.h"

namespace tessera::server::api_test {
namespace {

class ApiTalkTest : public ApiHandlerTest {
 protected:
  void SetUp() override {
    ApiHandlerTest::SetUp();
    if (HasFatalFailure()) return;
    TESSERA_LOAD_GUEST(talk, "talk", 64);
    shard::KindConfig kind;
    kind.name = "talk";
    kind.idle_shutdown_secs = 0;
    ASSERT_TRUE(kinds_.Add(kind, talk).ok());
  }

  void CreateTalk(const std::string& id, const json& params) {
    HttpResponse r =
        Call("POST", "/api/shards",
             json{{"kind", "talk"}, {"id", id}, {"params", params}}.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }

  // The host has no workers: the request waits on another thread while
  // this one runs the shards until the answer is there.
  HttpResponse CallStepping(const std::string& method,
                            const std::string& target,
                            const std::string& body) {
    std::future<HttpResponse> response = std::async(
        std::launch::async, [&] { return Call(method, target, body); });
    while (response.wait_for(std::chrono::milliseconds(1)) !=
           std::future_status::ready) {
      now_us_ += 50'000;
      StepTo(now_us_);
    }
    return response.get();
  }

  HttpResponse Move(const std::string& from, const json& body) {
    return CallStepping("POST", "/api/shards/" + from + "/transfer",
                        body.dump());
  }

  // A talk player `sid` joined to `shard` (an input of the subscriber).
  void JoinTalk(const std::string& shard, const std::string& sid) {
    ASSERT_TRUE(host_->AddSubscriber(shard, sid, "{}").ok());
    ASSERT_TRUE(host_
                    ->SubmitInput(shard, sid, ++seq_,
                                  Msgpack({{"join", json::object()}}))
                    .ok());
    now_us_ += 50'000;
    StepTo(now_us_);
  }

  // The talk shard's snapshot, from its latest frame.
  json Snapshot(const std::string& shard) {
    std::vector<RecordingSink::Frame> frames = sink_.frames();
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
      if (it->shard == shard) return FromMsgpack(it->snapshot);
    }
    return nullptr;
  }

  int64_t now_us_ = 0;
  uint64_t seq_ = 0;
};

TEST_F(ApiTalkTest, AMoveAnswers200AndThePlayerIsInTheTarget) {
  CreateTalk("a", json::object());
  CreateTalk("b", json::object());
  JoinTalk("a", "alice");
  HttpResponse r = Move("a", {{"subscriber", "alice"}, {"to", "b"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r), json({{"moved", true}, {"to", "b"}}));
  now_us_ += 50'000;
  StepTo(now_us_);
  EXPECT_TRUE(Snapshot("b")["players"].contains("alice")) << Snapshot("b");
  EXPECT_EQ(Snapshot("b")["players"]["alice"]["from"], "a");
  EXPECT_FALSE(Snapshot("a")["players"].contains("alice")) << Snapshot("a");
}

TEST_F(ApiTalkTest, ARefusedMoveIs409WithTheModulesText) {
  CreateTalk("a", json::object());
  CreateTalk("closed", {{"refuse", "no entry today"}});
  JoinTalk("a", "alice");
  HttpResponse r = Move("a", {{"subscriber", "alice"}, {"to", "closed"}});
  ExpectError(r, 409, "SHARD_TRANSFER_REFUSED");
  EXPECT_EQ(Body(r)["message"], "no entry today");
  now_us_ += 50'000;
  StepTo(now_us_);
  EXPECT_TRUE(Snapshot("a")["players"].contains("alice")) << "back in a";
}

TEST_F(ApiTalkTest, TheClaimsReachTheTarget) {
  CreateTalk("a", json::object());
  CreateTalk("party", {{"require_claim", "party"}});
  JoinTalk("a", "alice");
  HttpResponse r = Move("a", {{"subscriber", "alice"}, {"to", "party"}});
  ExpectError(r, 409, "SHARD_TRANSFER_REFUSED");
  EXPECT_EQ(Body(r)["message"], "missing claim party");
  r = Move("a", {{"subscriber", "alice"},
                 {"to", "party"},
                 {"claims", {{"party", "red"}}}});
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(ApiTalkTest, EveryWayAMoveCannotHappen) {
  CreateTalk("a", json::object());
  CreateTalk("b", json::object());
  CreateCounter("plain");
  JoinTalk("a", "alice");
  ExpectError(Move("a", {{"subscriber", "alice"}, {"to", "nowhere"}}), 404,
              "SHARD_NOT_FOUND");
  ExpectError(Move("nowhere", {{"subscriber", "alice"}, {"to", "b"}}), 404,
              "SHARD_NOT_FOUND");
  ExpectError(Move("a", {{"subscriber", "bob"}, {"to", "b"}}), 404,
              "SHARD_TRANSFER_NO_PLAYER");
  ExpectError(Move("a", {{"subscriber", "alice"}, {"to", "a"}}), 400,
              "INVALID_ARGUMENT");
  ExpectError(Move("a", {{"subscriber", "alice"}, {"to", "plain"}}), 400,
              "SHARD_TRANSFER_UNSUPPORTED");
  // The body is checked before the host is asked, with the same code.
  ExpectError(Move("a", {{"to", "b"}}), 400, "INVALID_ARGUMENT");
  ExpectError(Move("a", {{"subscriber", "alice"}}), 400, "INVALID_ARGUMENT");
  ExpectError(Move("a", {{"subscriber", "alice"}, {"to", "b c"}}), 400,
              "INVALID_ARGUMENT");
  ExpectError(
      Move("a", {{"subscriber", "alice"}, {"to", "b"}, {"claims", "x"}}), 400,
      "INVALID_ARGUMENT");
  // Nothing moved.
  now_us_ += 50'000;
  StepTo(now_us_);
  EXPECT_TRUE(Snapshot("a")["players"].contains("alice"));
}

TEST_F(ApiTalkTest, TheAdminTokenAndMethodAreChecked) {
  HttpResponse r = Call("POST", "/api/shards/a/transfer",
                        R"({"subscriber":"alice","to":"b"})", "wrong");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Call("GET", "/api/shards/a/transfer").status, 405);
  EXPECT_EQ(Call("POST", "/api/publish", R"({"to":"all","topic":"t"})", nullptr)
                .status,
            401);
  EXPECT_EQ(Call("GET", "/api/publish").status, 405);
}

// The host answers only when its shards run: without steps the handler
// gives up after transfer_timeout_ms with 504.
TEST_F(ApiTalkTest, AMoveWithoutAnAnswerInTimeIs504) {
  CreateTalk("a", json::object());
  CreateTalk("b", json::object());
  JoinTalk("a", "alice");
  ApiOptions options;
  options.admin_token = kToken;
  options.ticket_secret = kSecret;
  options.wall_clock = &wall_clock_;
  options.transfer_timeout_ms = 20;
  handler_ = std::make_unique<ApiHandler>(options, directory_.get(), &metrics_,
                                          &connections_);
  HttpResponse r = Call("POST", "/api/shards/a/transfer",
                        R"({"subscriber":"alice","to":"b"})");
  ExpectError(r, 504, "SHARD_TRANSFER_TIMEOUT");
  // The move itself goes on once the shards run.
  for (int i = 0; i < 10 && !Snapshot("b")["players"].contains("alice"); ++i) {
    now_us_ += 50'000;
    StepTo(now_us_);
  }
  EXPECT_TRUE(Snapshot("b")["players"].contains("alice")) << Snapshot("b");
}

TEST_F(ApiTalkTest, PublishCountsDeliveredAndRefusedTargets) {
  CreateTalk("a", {{"groups", {"world"}}});
  CreateTalk("b", {{"groups", {"world", "north"}}});
  CreateCounter("plain");  // no on_messages
  now_us_ += 50'000;
  StepTo(now_us_);  // groups are read after a tick

  HttpResponse r = CallStepping(
      "POST", "/api/publish",
      json{{"to", {{"group", "world"}}}, {"topic", "hi"}, {"data", "all"}}
          .dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r), json({{"delivered", 2}, {"refused", 0}}));
  r = CallStepping("POST", "/api/publish",
                   json{{"to", {{"shard", "plain"}}}, {"topic", "hi"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r), json({{"delivered", 0}, {"refused", 1}}));
  r = CallStepping("POST", "/api/publish",
                   json{{"to", {{"shard", "gone"}}}, {"topic", "hi"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r), json({{"delivered", 0}, {"refused", 1}}));

  // The three forms of data, as the module receives them (from "": the
  // server).
  for (const json& body :
       {json{{"to", {{"shard", "b"}}}, {"topic", "text"}, {"data", "héllo"}},
        json{{"to", {{"shard", "b"}}},
             {"topic", "json"},
             {"data", {{"k", {1, 2}}}}},
        json{{"to", {{"shard", "b"}}},
             {"topic", "bin"},
             {"data_base64", "AP8="}}}) {
    r = CallStepping("POST", "/api/publish", body.dump());
    ASSERT_EQ(r.status, 200) << r.body;
  }
  now_us_ += 50'000;
  StepTo(now_us_);
  const json inbox = Snapshot("b")["inbox"];
  ASSERT_GE(inbox.size(), 4u) << inbox;
  const size_t n = inbox.size();
  EXPECT_EQ(inbox[n - 4], json({"", "hi", "all"}));
  EXPECT_EQ(inbox[n - 3], json({"", "text", "héllo"}));
  EXPECT_EQ(inbox[n - 2], json({"", "json", R"({"k":[1,2]})"}));
  EXPECT_EQ(inbox[n - 1][1], "bin");
  EXPECT_EQ(inbox[n - 1][2], std::string("\0\xff", 2));
}

TEST_F(ApiTalkTest, PublishChecksItsBody) {
  for (const char* body :
       {R"({"topic":"t"})", R"({"to":"everyone","topic":"t"})",
        R"({"to":{"shard":5},"topic":"t"})",
        R"({"to":{"shard":"a","group":"g"},"topic":"t"})",
        R"({"to":{"planet":"x"},"topic":"t"})", R"({"to":"all"})",
        R"({"to":"all","topic":7})",
        R"({"to":"all","topic":"t","data":"x","data_base64":"eA=="})",
        R"({"to":"all","topic":"t","data_base64":"not base64!"})",
        R"({"to":"all","topic":"t","data_base64":5})"}) {
    ExpectError(Call("POST", "/api/publish", body), 400, "invalid_argument");
  }
}

TEST_F(ApiTalkTest, MovesAndMessagesAreCounted) {
  CreateTalk("a", {{"groups", {"world"}}});
  CreateTalk("b", {{"groups", {"world"}}});
  CreateTalk("closed", {{"refuse", "no"}});
  JoinTalk("a", "alice");
  ASSERT_EQ(Move("a", {{"subscriber", "alice"}, {"to", "b"}}).status, 200);
  ASSERT_EQ(Move("b", {{"subscriber", "alice"}, {"to", "closed"}}).status, 409);
  ASSERT_EQ(
      CallStepping("POST", "/api/publish",
                   json{{"to", {{"group", "world"}}}, {"topic", "t"}}.dump())
          .status,
      200);
  ASSERT_EQ(
      CallStepping("POST", "/api/publish",
                   json{{"to", {{"shard", "gone"}}}, {"topic", "t"}}.dump())
          .status,
      200);
  now_us_ += 50'000;
  StepTo(now_us_);  // the group's inboxes reach the modules
  const std::string body = Call("GET", "/metrics", "", nullptr).body;
  EXPECT_THAT(
      body, HasSubstr("tessera_shard_transfers_total{outcome=\"moved\"} 1\n"));
  EXPECT_THAT(body, HasSubstr("tessera_shard_transfers_total{outcome=\""
                              "shard_transfer_refused\"} 1\n"));
  EXPECT_THAT(body, HasSubstr("tessera_shard_transfer_seconds_count 2\n"));
  EXPECT_THAT(body, HasSubstr("tessera_shard_messages_delivered_total 2\n"));
  EXPECT_THAT(body, HasSubstr("tessera_shard_messages_refused_total{reason=\""
                              "not_found\"} 1\n"));
  EXPECT_THAT(body, HasSubstr("tessera_shard_messages_refused_total{reason=\""
                              "inbox_full\"} 0\n"));
  EXPECT_THAT(body, HasSubstr("tessera_shard_messages_sent_total "));
}

}  // namespace
}  // namespace tessera::server::api_test
