// ApiHandler's metrics text and what the server counts and logs of shard
// stops and failures. Fixture: api_handler_test_fixture.h.
#include <string>
#include <vector>

#include "server/api_handler_test_fixture.h"

namespace tessera::server::api_test {
namespace {

TEST_F(ApiHandlerTest, MetricsText) {
  CreateCounter("a");
  CreateCounter("b");
  ASSERT_TRUE(host_->AddSubscriber("a", "alice").ok());
  ASSERT_TRUE(host_->AddSubscriber("b", "bob").ok());
  for (int64_t t = 50'000; t <= 150'000; t += 50'000) StepTo(t);
  ASSERT_EQ(Call("POST", "/api/shards/b/stop").status, 200);
  StepTo(160'000);

  HttpResponse r = Call("GET", "/metrics", "", nullptr);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(r.body, HasSubstr("# TYPE tessera_shards gauge"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shards{status=\"running\"} 1\n"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shards{status=\"stopped\"} 1\n"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shards{status=\"failed\"} 0\n"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shard_subscribers 1\n"));
  EXPECT_THAT(r.body, HasSubstr("# TYPE tessera_shard_ticks_total counter"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shard_ticks_total 6\n"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shard_overruns_total 0\n"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shard_fuel_used_total "));

  // Counters only grow, by what happened since the last scrape.
  StepTo(200'000);
  r = Call("GET", "/metrics", "", nullptr);
  EXPECT_THAT(r.body, HasSubstr("tessera_shard_ticks_total 7\n"));
  StepTo(2'000'000);  // b is removed after its retention; a ticks on
  r = Call("GET", "/metrics", "", nullptr);
  EXPECT_THAT(r.body, HasSubstr("tessera_shards{status=\"stopped\"} 0\n"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shard_ticks_total 8\n"));
}

// A browser following the demo's Metrics link gets a page to read: each
// family with its help and type, histograms as count, sum and mean; a
// scraper or curl (no text/html in Accept), or ?format=text, still gets
// the exposition text.
TEST_F(ApiHandlerTest, MetricsForABrowserAreAPageForAScraperText) {
  CreateCounter("a");
  for (int64_t t = 50'000; t <= 150'000; t += 50'000) StepTo(t);
  auto get = [&](const std::string& target, const std::string& accept) {
    HttpRequest request;
    request.method = "GET";
    request.target = target;
    request.remote_address = "127.0.0.1";
    if (!accept.empty()) request.headers["accept"] = accept;
    return handler_->Handle(request);
  };
  const std::string browser =
      "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
  HttpResponse page = get("/metrics", browser);
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_THAT(page.body, HasSubstr("<h2>tessera_shard_ticks_total</h2>"));
  EXPECT_THAT(page.body, HasSubstr("(counter)"));
  EXPECT_THAT(page.body, HasSubstr("<td class=v>3</td>"));
  EXPECT_THAT(page.body, HasSubstr("<td>status=&quot;running&quot;</td>"));
  EXPECT_THAT(page.body, HasSubstr("<th>mean</th>"));  // a histogram
  EXPECT_THAT(page.body, Not(HasSubstr("_bucket")));
  EXPECT_THAT(page.body, HasSubstr("href=\"/metrics?format=text\""));

  for (const HttpResponse& text :
       {get("/metrics?format=text", browser), get("/metrics", ""),
        get("/metrics", "text/plain;version=0.0.4;q=0.4,*/*;q=0.1")}) {
    EXPECT_EQ(text.content_type, "text/plain; version=0.0.4; charset=utf-8");
    EXPECT_THAT(text.body, HasSubstr("tessera_shard_ticks_total 3\n"));
  }
}

// Counts are taken when ticks and stops happen: a shard that stopped and
// was forgotten before any scrape still counts (they were read from the
// shards still listed, so these ticks were lost).
TEST_F(ApiHandlerTest, CountsOutliveForgottenShards) {
  CreateCounter("a");
  for (int64_t t = 50'000; t <= 150'000; t += 50'000) StepTo(t);
  ASSERT_EQ(Call("POST", "/api/shards/a/stop").status, 200);
  StepTo(160'000);
  StepTo(2'000'000);  // past the retention: forgotten
  ExpectError(Call("GET", "/api/shards/a"), 404, "not_found");

  const std::string body = Call("GET", "/metrics", "", nullptr).body;
  EXPECT_THAT(body, HasSubstr("tessera_shard_ticks_total 3\n"));
  EXPECT_THAT(body, MatchesRegex("(.|\n)*tessera_shard_fuel_used_total "
                                 "[1-9][0-9]*\n(.|\n)*"));
  EXPECT_THAT(body,
              HasSubstr("tessera_shard_stops_total{reason=\"stopped\"} 1\n"));
  EXPECT_THAT(body, Not(HasSubstr("tessera_shard_failures_total")));
  // One server log line for the stop, with its reason.
  EXPECT_THAT(log(), ElementsAre("shard a (counter) stopped (stopped): "
                                 "stopped by request"));
}

// A failed shard: one log line with its failure, counted by the kind of
// failure, and its reason readable through the API for minutes, not 5 s.
TEST_F(ApiHandlerTest, AFailedShardIsLoggedCountedAndReadableForMinutes) {
  TESSERA_LOAD_GUEST(panicker, "panicker", 64);
  shard::KindConfig kind;
  kind.name = "panicker";
  kind.idle_shutdown_secs = 0;
  ASSERT_TRUE(kinds_.Add(kind, panicker).ok());
  ASSERT_EQ(
      Call("POST", "/api/shards",
           json{{"kind", "panicker"}, {"id", "p"}, {"params", {{"at", 2}}}}
               .dump())
          .status,
      201);
  StepTo(50'000);
  StepTo(100'000);  // tick 2 panics
  ASSERT_EQ(host_->Get("p")->stop_reason, shard::StopReason::kFailed);
  EXPECT_THAT(log(), ElementsAre("shard p (panicker) stopped (failed): "
                                 "panic: boom at tick 2"));

  for (int64_t t : {1'100'000, 6'000'000, 299'000'000}) {
    SCOPED_TRACE(t);
    StepTo(t);  // past the 1 s retention of other stops
    HttpResponse r = Call("GET", "/api/shards/p");
    ASSERT_EQ(r.status, 200) << r.body;
    json detail = Body(r);
    EXPECT_EQ(detail["status"], "stopped");
    EXPECT_EQ(detail["stop_reason"], "failed");
    EXPECT_THAT(detail["last_error"].get<std::string>(),
                HasSubstr("boom at tick 2"));
  }
  StepTo(100'000 + kFailedRetentionUs);
  ExpectError(Call("GET", "/api/shards/p"), 404, "not_found");

  const std::string body = Call("GET", "/metrics", "", nullptr).body;
  EXPECT_THAT(body, HasSubstr("tessera_shard_ticks_total 2\n"));
  EXPECT_THAT(body,
              HasSubstr("tessera_shard_stops_total{reason=\"failed\"} 1\n"));
  EXPECT_THAT(body,
              HasSubstr("tessera_shard_failures_total{reason=\"panic\"} 1\n"));
}

TEST(StopLogLine, OneEscapedLineWithTheReason) {
  EXPECT_EQ(StopLogLine("c1", "arena", shard::StopReason::kIdle,
                        "no subscribers for 30 s"),
            "shard c1 (arena) stopped (idle): no subscribers for 30 s");
  EXPECT_EQ(StopLogLine("c1", "", shard::StopReason::kFinished, ""),
            "shard c1 stopped (finished)");
  // A guest's failure text cannot forge a second line or drive the
  // terminal.
  EXPECT_EQ(StopLogLine("c1", "arena", shard::StopReason::kFailed,
                        "panic: x\n[shard other] panic: \x1B[2J"),
            "shard c1 (arena) stopped (failed): panic: x\\n[shard other] "
            "panic: \\x1B[2J");
  const std::string huge = StopLogLine("c1", "k", shard::StopReason::kFailed,
                                       std::string(1 << 20, 'x'));
  EXPECT_LT(huge.size(), 4096u + 64u);
}

TEST(ShardEventMetrics, FailureKinds) {
  using K = ShardEventMetrics;
  EXPECT_STREQ(K::FailureKind("fuel exhausted: tessera_tick used more"),
               "fuel");
  EXPECT_STREQ(K::FailureKind("watchdog: call ran longer"), "watchdog");
  EXPECT_STREQ(K::FailureKind("tick budget: tick used 9 ms"), "tick_budget");
  EXPECT_STREQ(K::FailureKind("memory: the module asked"), "memory");
  EXPECT_STREQ(K::FailureKind("panic: boom"), "panic");
  EXPECT_STREQ(K::FailureKind("trap: out of bounds memory access in tick"),
               "trap");
  EXPECT_STREQ(K::FailureKind("abi: bad pointer"), "abi");
  EXPECT_STREQ(K::FailureKind("error: the tick failed: x"), "error");
  EXPECT_STREQ(K::FailureKind("host: calling tessera_tick"), "host");
  EXPECT_STREQ(K::FailureKind("panicked"), "other");
  EXPECT_STREQ(K::FailureKind(""), "other");
}

}  // namespace
}  // namespace tessera::server::api_test
