// What the dashboard (/_dashboard) relies on: its static page and script,
// served without a token, and a shard's recent guest log lines (GET
// /api/shards/<id>/log). Fixture: api_handler_test_fixture.h.
#include <string>

#include "server/api_handler_test_fixture.h"

namespace tessera::server::api_test {
namespace {

TEST_F(ApiHandlerTest, DashboardPageAndScriptNeedNoToken) {
  HttpResponse page = Call("GET", "/_dashboard", "", nullptr);
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_THAT(page.body, HasSubstr("<title>tessera dashboard</title>"));
  EXPECT_THAT(page.body, HasSubstr("src=\"/_dashboard/app.js\""));
  // The page holds no secret: the token is never in it.
  EXPECT_THAT(page.body, Not(HasSubstr(kToken)));
  EXPECT_EQ(Call("GET", "/_dashboard/", "", nullptr).status, 200);

  HttpResponse script = Call("GET", "/_dashboard/app.js", "", nullptr);
  ASSERT_EQ(script.status, 200);
  EXPECT_EQ(script.content_type, "text/javascript; charset=utf-8");
  EXPECT_THAT(script.body, HasSubstr("/api/shards"));
  EXPECT_THAT(script.body, HasSubstr("Bearer "));

  ExpectError(Call("POST", "/_dashboard", "", nullptr), 405,
              "method_not_allowed");
  ExpectError(Call("PUT", "/_dashboard/app.js", "", nullptr), 405,
              "method_not_allowed");
  ExpectError(Call("GET", "/_dashboard/nope.js", "", nullptr), 404,
              "not_found");
}

TEST_F(ApiHandlerTest, ShardLogHasTheGuestsRecentLines) {
  TESSERA_LOAD_GUEST(logger, "logger", 64);
  shard::KindConfig kind;
  kind.name = "logger";
  kind.idle_shutdown_secs = 0;
  ASSERT_TRUE(kinds_.Add(kind, logger).ok());
  ASSERT_EQ(
      Call("POST", "/api/shards", json{{"kind", "logger"}, {"id", "l"}}.dump())
          .status,
      201);
  CreateCounter("quiet");

  // Before any tick: nothing logged yet.
  HttpResponse r = Call("GET", "/api/shards/l/log");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r), json::parse(R"({"lines":[]})"));

  StepTo(50'000);
  StepTo(100'000);
  r = Call("GET", "/api/shards/l/log");
  ASSERT_EQ(r.status, 200) << r.body;
  const json lines = Body(r)["lines"];
  ASSERT_TRUE(lines.is_array());
  // Each tick logs "tick N" at levels 0 to 3, oldest first.
  EXPECT_EQ(lines.front(), json({{"level", 0}, {"text", "tick 1"}}));
  EXPECT_TRUE(std::find(lines.begin(), lines.end(),
                        json({{"level", 3}, {"text", "tick 2"}})) !=
              lines.end())
      << lines.dump();
  EXPECT_EQ(Body(Call("GET", "/api/shards/quiet/log")),
            json::parse(R"({"lines":[]})"));

  // Only the most recent lines are kept (HostOptions::log_lines, 64).
  for (int64_t t = 150'000; t <= 1'500'000; t += 50'000) StepTo(t);
  const json kept = Body(Call("GET", "/api/shards/l/log"))["lines"];
  EXPECT_EQ(kept.size(), 64u);
  EXPECT_NE(kept.back()["text"].get<std::string>().find("tick 30"),
            std::string::npos)
      << kept.back().dump();

  // A stopped shard's lines stay readable while it is listed.
  ASSERT_EQ(Call("POST", "/api/shards/l/stop").status, 200);
  StepTo(1'550'000);
  EXPECT_EQ(Body(Call("GET", "/api/shards/l/log"))["lines"].size(), 64u);

  ExpectError(Call("GET", "/api/shards/nope/log"), 404, "not_found");
  ExpectError(Call("GET", "/api/shards/l/log", "", nullptr), 401,
              "unauthorized");
  ExpectError(Call("POST", "/api/shards/l/log"), 405, "method_not_allowed");
}

}  // namespace
}  // namespace tessera::server::api_test
