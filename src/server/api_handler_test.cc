// ApiHandler's admin routes for shards: auth, create, list and detail,
// errors and their shapes, capacity, inputs, kick and stop, and what a
// stop notifies. Fixture: api_handler_test_fixture.h.
#include <string>
#include <vector>

#include "server/api_handler_test_fixture.h"

namespace tessera::server::api_test {
namespace {

TEST_F(ApiHandlerTest, Healthz) {
  HttpResponse r = Call("GET", "/healthz", "", nullptr);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Body(r), json({{"status", "ok"}}));
  r = Call("POST", "/healthz", "", nullptr);
  ExpectError(r, 405, "method_not_allowed");
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0],
            std::make_pair(std::string("Allow"), std::string("GET")));
}

TEST_F(ApiHandlerTest, AdminRoutesNeedTheBearerToken) {
  const std::vector<std::pair<std::string, std::string>> routes = {
      {"GET", "/api/shards"},
      {"POST", "/api/shards"},
      {"GET", "/api/shards/c1"},
      {"POST", "/api/shards/c1/kick"},
      {"POST", "/api/shards/c1/stop"},
      {"POST", "/api/shards/c1/tickets"},
      {"POST", "/api/shards/c1/inputs"},
  };
  for (const auto& [method, target] : routes) {
    SCOPED_TRACE(method + " " + target);
    HttpResponse r = Call(method, target, "{}", nullptr);
    ExpectError(r, 401, "unauthorized");
    ASSERT_EQ(r.headers.size(), 1u);
    EXPECT_EQ(r.headers[0].first, "WWW-Authenticate");
    ExpectError(Call(method, target, "{}", "wrong"), 401, "unauthorized");
    // A prefix of the token, and the token with something appended.
    ExpectError(Call(method, target, "{}", "admin-token-12"), 401,
                "unauthorized");
    ExpectError(Call(method, target, "{}", "admin-token-1234"), 401,
                "unauthorized");
  }
  HttpRequest basic;
  basic.method = "GET";
  basic.target = "/api/shards";
  basic.headers["authorization"] = std::string("Basic ") + kToken;
  ExpectError(handler_->Handle(basic), 401, "unauthorized");
  basic.headers["authorization"] = std::string("bearer ") + kToken;
  EXPECT_EQ(handler_->Handle(basic).status, 200);  // scheme is case-blind
}

TEST_F(ApiHandlerTest, AnEmptyAdminTokenAdmitsNobody) {
  ApiOptions options;
  options.ticket_secret = kSecret;
  ApiHandler handler(options, directory_.get(), &metrics_, &connections_);
  HttpRequest request;
  request.method = "GET";
  request.target = "/api/shards";
  request.headers["authorization"] = "Bearer ";
  ExpectError(handler.Handle(request), 401, "unauthorized");
}

TEST_F(ApiHandlerTest, CreateListAndDetail) {
  HttpResponse r = Call("POST", "/api/shards",
                        R"({"kind":"counter","id":"c1","params":{"start":5}})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r), json({{"id", "c1"},
                           {"kind", "counter"},
                           {"status", "running"},
                           {"tick", 0},
                           {"subscribers", 0}}));
  // Recorded in the directory with the params in the kind's codec.
  std::optional<store::ShardRecord> record = store_.Record("c1");
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->kind, "counter");
  EXPECT_EQ(record->status, "running");
  EXPECT_EQ(FromMsgpack(record->params), json({{"start", 5}}));

  StepTo(50'000);
  StepTo(100'000);
  ASSERT_TRUE(host_->AddSubscriber("c1", "alice").ok());
  connections_.Connect("c1", "alice");
  connections_.Connect("c1", "alice");
  connections_.Connect("c1", "bob");

  r = Call("GET", "/api/shards");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Body(r), json::parse(R"([{"id":"c1","kind":"counter",
      "status":"running","tick":2,"subscribers":1}])"));

  r = Call("GET", "/api/shards/c1");
  ASSERT_EQ(r.status, 200);
  json detail = Body(r);
  EXPECT_EQ(detail["id"], "c1");
  EXPECT_EQ(detail["tick"], 2);
  EXPECT_EQ(detail["subscriber_ids"], json({"alice", "bob"}));
  EXPECT_GT(detail["fuel_used"].get<int64_t>(), 0);
  EXPECT_EQ(detail["overruns"], 0);
  EXPECT_EQ(detail["queued_inputs"], 0);
  EXPECT_EQ(detail["stop_reason"], nullptr);
  EXPECT_EQ(detail["last_error"], nullptr);
  EXPECT_EQ(detail["limits"], json::parse(R"({"codec":"msgpack",
      "tick_rate":20,"tick_budget_ms":100,"memory_mb":64,
      "fuel_per_tick":200000000,"max_run_ms":200,"idle_shutdown_secs":0,
      "on_stop":"http://hooks.test/stopped"})"));

  ExpectError(Call("GET", "/api/shards/nope"), 404, "not_found");
}

TEST_F(ApiHandlerTest, CreateErrors) {
  CreateCounter("c1");
  ExpectError(Call("POST", "/api/shards", R"({"kind":"counter","id":"c1"})"),
              409, "already_exists");
  ExpectError(Call("POST", "/api/shards", R"({"kind":"nope","id":"c2"})"), 404,
              "unknown_kind");
  ExpectError(Call("POST", "/api/shards", R"({"kind":"counter",)"), 400,
              "bad_json");
  ExpectError(Call("POST", "/api/shards", R"([1,2])"), 400, "bad_json");
  ExpectError(Call("POST", "/api/shards", R"({"id":"c2"})"), 400,
              "invalid_argument");
  ExpectError(Call("POST", "/api/shards", R"({"kind":7,"id":"c2"})"), 400,
              "invalid_argument");
  ExpectError(Call("POST", "/api/shards", R"({"kind":"counter"})"), 400,
              "invalid_argument");
  for (const char* bad : {"", "a/b", "a b", "../x", "é"}) {
    ExpectError(Call("POST", "/api/shards",
                     json{{"kind", "counter"}, {"id", bad}}.dump()),
                400, "invalid_argument");
  }
  ExpectError(
      Call("POST", "/api/shards",
           json{{"kind", "counter"}, {"id", std::string(129, 'a')}}.dump()),
      400, "invalid_argument");
  // The module refuses the params: its text comes back.
  HttpResponse r =
      Call("POST", "/api/shards",
           R"({"kind":"counter","id":"c2","params":{"start":"x"}})");
  ExpectError(r, 400, "invalid_argument");
  EXPECT_FALSE(host_->Get("c2").has_value());
  EXPECT_FALSE(store_.Record("c2").has_value());
}

TEST_F(ApiHandlerTest, CapacityIsA503) {
  CreateCounter("a");
  CreateCounter("b");
  CreateCounter("c");
  HttpResponse r =
      Call("POST", "/api/shards", R"({"kind":"counter","id":"d"})");
  ExpectError(r, 503, "capacity");
  EXPECT_THAT(Body(r)["message"].get<std::string>(), HasSubstr("3 shards"));
  // A stopped shard frees its place.
  ASSERT_EQ(Call("POST", "/api/shards/a/stop").status, 200);
  StepTo(1000);
  EXPECT_EQ(
      Call("POST", "/api/shards", R"({"kind":"counter","id":"d"})").status,
      201);
}

TEST_F(ApiHandlerTest, AStoreThatCannotRecordStopsTheShard) {
  store_.set_fail_writes(true);
  HttpResponse r =
      Call("POST", "/api/shards", R"({"kind":"counter","id":"c1"})");
  ExpectError(r, 500, "io");
  EXPECT_THAT(Body(r)["message"].get<std::string>(), HasSubstr("stopped"));
  StepTo(1000);
  EXPECT_EQ(host_->Get("c1")->status, shard::ShardStatus::kStopped);
}

TEST_F(ApiHandlerTest, JsonCodecKindAndServerInputs) {
  HttpResponse r =
      Call("POST", "/api/shards",
           R"({"kind":"counter-json","id":"j1","params":{"start":2}})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(store_.Record("j1")->params, R"({"start":2})");

  r = Call("POST", "/api/shards/j1/inputs", R"({"input":{"add":{"n":3}}})");
  ASSERT_EQ(r.status, 202) << r.body;
  const uint64_t seq1 = Body(r)["seq"].get<uint64_t>();
  r = Call("POST", "/api/shards/j1/inputs", R"({"input":{"add":{"n":-1}}})");
  ASSERT_EQ(r.status, 202) << r.body;
  const uint64_t seq2 = Body(r)["seq"].get<uint64_t>();
  EXPECT_GT(seq2, seq1);
  EXPECT_EQ(host_->Get("j1")->queued_inputs, 2u);

  StepTo(50'000);
  std::vector<RecordingSink::Frame> frames = sink_.frames();
  ASSERT_EQ(frames.size(), 1u);
  ASSERT_EQ(frames[0].inputs.size(), 2u);
  EXPECT_EQ(frames[0].inputs[0].subscriber, "");  // the server side
  EXPECT_EQ(frames[0].inputs[0].seq, seq1);
  EXPECT_TRUE(frames[0].inputs[0].accepted);
  EXPECT_EQ(frames[0].inputs[1].seq, seq2);
  EXPECT_FALSE(frames[0].inputs[1].accepted);
  EXPECT_EQ(frames[0].inputs[1].rejection, "n must be positive");
  json snapshot = json::parse(frames[0].snapshot);  // JSON codec
  EXPECT_EQ(snapshot["value"], 5);
  EXPECT_EQ(snapshot["last_sid"], "");

  // Inputs to a msgpack kind are encoded as MessagePack.
  CreateCounter("m1", 1);
  ASSERT_EQ(
      Call("POST", "/api/shards/m1/inputs", R"({"input":{"add":{"n":4}}})")
          .status,
      202);
  StepTo(100'000);
  frames = sink_.frames();
  auto m1 = std::find_if(frames.begin(), frames.end(),
                         [](const auto& f) { return f.shard == "m1"; });
  ASSERT_NE(m1, frames.end());
  EXPECT_EQ(FromMsgpack(m1->snapshot)["value"], 5);
}

TEST_F(ApiHandlerTest, InputErrors) {
  CreateCounter("c1");
  ExpectError(Call("POST", "/api/shards/c1/inputs", "{}"), 400,
              "invalid_argument");
  ExpectError(Call("POST", "/api/shards/c1/inputs", "not json"), 400,
              "bad_json");
  ExpectError(Call("POST", "/api/shards/nope/inputs", R"({"input":1})"), 404,
              "not_found");
  ASSERT_TRUE(host_->Stop("c1").ok());
  StepTo(1000);
  ExpectError(Call("POST", "/api/shards/c1/inputs", R"({"input":1})"), 409,
              "stopped");
}

TEST_F(ApiHandlerTest, KickClosesTheSubscribersConnections) {
  CreateCounter("c1");
  connections_.Connect("c1", "alice");
  connections_.Connect("c1", "alice");
  connections_.Connect("c1", "bob");
  HttpResponse r =
      Call("POST", "/api/shards/c1/kick", R"({"subscriber":"alice"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r), json({{"closed", 2}}));
  auto closes = connections_.closes();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].shard, "c1");
  EXPECT_EQ(closes[0].subscriber, "alice");
  EXPECT_EQ(closes[0].code, net::kCloseKicked);
  EXPECT_EQ(closes[0].reason, "kicked by an operator");
  EXPECT_EQ(connections_.Subscribers("c1"), std::vector<std::string>{"bob"});

  ExpectError(Call("POST", "/api/shards/c1/kick", "{}"), 400,
              "invalid_argument");
  ExpectError(Call("POST", "/api/shards/c1/kick", R"({"subscriber":""})"), 400,
              "invalid_argument");
  ExpectError(
      Call("POST", "/api/shards/nope/kick", R"({"subscriber":"alice"})"), 404,
      "not_found");
}

TEST_F(ApiHandlerTest, StopClosesConnectionsForgetsAndNotifies) {
  CreateCounter("c1");
  connections_.Connect("c1", "alice");
  HttpResponse r = Call("POST", "/api/shards/c1/stop");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r), json({{"id", "c1"}, {"stopped", true}, {"closed", 1}}));
  auto closes = connections_.closes();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, net::kCloseShardStopped);
  EXPECT_EQ(closes[0].reason, "stopped: by an operator");
  EXPECT_FALSE(store_.Record("c1").has_value());  // forgotten at once

  StepTo(1000);                         // the worker stops it: OnStopped
  ASSERT_EQ(sink_.stops().size(), 1u);  // forwarded to the network layer
  EXPECT_EQ(sink_.stops()[0].second, shard::StopReason::kStopped);
  json detail = Body(Call("GET", "/api/shards/c1"));
  EXPECT_EQ(detail["status"], "stopped");
  EXPECT_EQ(detail["stop_reason"], "stopped");

  auto posts = WaitForPosts(1);
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].first, kHook);
  EXPECT_EQ(json::parse(posts[0].second),
            json::parse(R"({"shardId":"c1","kind":"counter",
                "reason":"stopped","error":null})"));

  // Stopping it again: already stopped, nothing recorded.
  ExpectError(Call("POST", "/api/shards/c1/stop"), 409, "failed_precondition");
  ExpectError(Call("POST", "/api/shards/nope/stop"), 404, "not_found");
  // After the retention it is gone entirely.
  StepTo(2'000'000);
  ExpectError(Call("GET", "/api/shards/c1"), 404, "not_found");
}

TEST_F(ApiHandlerTest, AModuleThatFinishesIsForgottenAndNotified) {
  CreateCounter("c1");
  ASSERT_EQ(Call("POST", "/api/shards/c1/inputs", R"({"input":{"finish":{}}})")
                .status,
            202);
  StepTo(50'000);
  EXPECT_EQ(host_->Get("c1")->stop_reason, shard::StopReason::kFinished);
  EXPECT_FALSE(store_.Record("c1").has_value());
  auto posts = WaitForPosts(1);
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(json::parse(posts[0].second)["reason"], "finished");
  // No onStop URL for counter-json: nothing is posted for it.
  ASSERT_EQ(
      Call("POST", "/api/shards", R"({"kind":"counter-json","id":"j"})").status,
      201);
  ASSERT_EQ(Call("POST", "/api/shards/j/stop").status, 200);
  StepTo(60'000);
  // A shard with an onStop URL stopped after j: the notifier delivers in
  // order, so once its notice is in, one for j would have been too.
  CreateCounter("c2");
  ASSERT_EQ(Call("POST", "/api/shards/c2/stop").status, 200);
  StepTo(70'000);
  posts = WaitForPosts(2);
  ASSERT_EQ(posts.size(), 2u);
  EXPECT_EQ(json::parse(posts[0].second)["shardId"], "c1");
  EXPECT_EQ(json::parse(posts[1].second)["shardId"], "c2");
  std::lock_guard<std::mutex> lock(posts_mu_);
  EXPECT_EQ(posts_.size(), 2u);
}

}  // namespace
}  // namespace tessera::server::api_test
