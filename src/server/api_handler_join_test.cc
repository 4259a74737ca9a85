// ApiHandler's routes for players and browsers: tickets, the dev join,
// static files (traversal included), unknown routes and wrong methods.
// Fixture: api_handler_test_fixture.h.
#include <string>
#include <vector>

#include "server/api_handler_test_fixture.h"

namespace tessera::server::api_test {
namespace {

TEST_F(ApiHandlerTest, Tickets) {
  CreateCounter("c1");
  HttpResponse r = Call("POST", "/api/shards/c1/tickets",
                        R"({"subscriber":"alice","ttl_secs":60,
                            "claims":{"team":"red"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  json body = Body(r);
  EXPECT_EQ(body["expires"], kNowUnix + 60);
  net::TicketCheck check = net::VerifyTicket(
      kSecret, body["ticket"].get<std::string>(), "c1", kNowUnix);
  ASSERT_EQ(check.error, net::TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.subscriber_id, "alice");
  EXPECT_EQ(json::parse(check.ticket.claims_json), json({{"team", "red"}}));
  EXPECT_EQ(net::VerifyTicket(kSecret, body["ticket"].get<std::string>(), "c1",
                              kNowUnix + 60)
                .error,
            net::TicketError::kExpired);
  EXPECT_EQ(net::VerifyTicket("other", body["ticket"].get<std::string>(), "c1",
                              kNowUnix)
                .error,
            net::TicketError::kInvalid);

  // The default lifetime is ten minutes.
  r = Call("POST", "/api/shards/c1/tickets", R"({"subscriber":"bob"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["expires"], kNowUnix + 600);

  ExpectError(Call("POST", "/api/shards/c1/tickets", "{}"), 400,
              "invalid_argument");
  ExpectError(Call("POST", "/api/shards/c1/tickets",
                   R"({"subscriber":"a","ttl_secs":0})"),
              400, "invalid_argument");
  ExpectError(Call("POST", "/api/shards/c1/tickets",
                   R"({"subscriber":"a","ttl_secs":"60"})"),
              400, "invalid_argument");
  ExpectError(Call("POST", "/api/shards/c1/tickets",
                   R"({"subscriber":"a","claims":[1]})"),
              400, "invalid_argument");
  ExpectError(Call("POST", "/api/shards/nope/tickets", R"({"subscriber":"a"})"),
              404, "not_found");
}

TEST_F(ApiHandlerTest, DevJoinCreatesOnceAndMintsGuestTickets) {
  const std::string join =
      R"({"shard":"arena-1","kind":"counter","params":{"start":7}})";
  HttpResponse r = Call("POST", "/api/dev/join", join, nullptr);  // no token
  ASSERT_EQ(r.status, 200) << r.body;
  json body = Body(r);
  EXPECT_EQ(body["shardId"], "arena-1");
  const std::string guest = body["subscriberId"].get<std::string>();
  EXPECT_THAT(guest, MatchesRegex("guest-[0-9a-f]{8}"));
  net::TicketCheck check = net::VerifyTicket(
      kSecret, body["ticket"].get<std::string>(), "arena-1", kNowUnix);
  ASSERT_EQ(check.error, net::TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.subscriber_id, guest);
  EXPECT_EQ(check.ticket.expires_unix, kNowUnix + 600);
  ASSERT_TRUE(store_.Record("arena-1").has_value());

  // Joining again joins the same shard (its state is kept) as a new guest.
  StepTo(50'000);
  r = Call("POST", "/api/dev/join", join, nullptr);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(Body(r)["subscriberId"], guest);
  EXPECT_EQ(host_->Get("arena-1")->tick, 1u);
  EXPECT_EQ(host_->List().size(), 1u);

  // A chosen subscriber id; the kind may be left out for an existing shard.
  r = Call("POST", "/api/dev/join",
           R"({"shard":"arena-1","subscriber":"carol"})", nullptr);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["subscriberId"], "carol");
  // Claims go into the ticket (a zone that needs a party checks them).
  r = Call("POST", "/api/dev/join",
           R"({"shard":"arena-1","claims":{"party":"red"}})", nullptr);
  ASSERT_EQ(r.status, 200) << r.body;
  check = net::VerifyTicket(kSecret, Body(r)["ticket"].get<std::string>(),
                            "arena-1", kNowUnix);
  ASSERT_EQ(check.error, net::TicketError::kNone) << check.message;
  EXPECT_EQ(json::parse(check.ticket.claims_json), json({{"party", "red"}}));
  ExpectError(Call("POST", "/api/dev/join",
                   R"({"shard":"arena-1","claims":"red"})", nullptr),
              400, "invalid_argument");

  ExpectError(Call("POST", "/api/dev/join",
                   R"({"shard":"arena-1","kind":"counter-json"})", nullptr),
              409, "kind_mismatch");
  ExpectError(Call("POST", "/api/dev/join", R"({"shard":"new"})", nullptr), 400,
              "invalid_argument");
  ExpectError(Call("POST", "/api/dev/join", R"({"shard":"new","kind":"nope"})",
                   nullptr),
              404, "unknown_kind");
  ExpectError(Call("POST", "/api/dev/join", R"({"kind":"counter"})", nullptr),
              400, "invalid_argument");
  ExpectError(Call("POST", "/api/dev/join", "{", nullptr), 400, "bad_json");
  ExpectError(Call("GET", "/api/dev/join", "", nullptr), 405,
              "method_not_allowed");

  // A stopped shard is created again by the next join.
  ASSERT_EQ(Call("POST", "/api/shards/arena-1/stop").status, 200);
  StepTo(60'000);
  r = Call("POST", "/api/dev/join", join, nullptr);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(host_->Get("arena-1")->status, shard::ShardStatus::kRunning);
  EXPECT_EQ(host_->Get("arena-1")->tick, 0u);
  EXPECT_TRUE(store_.Record("arena-1").has_value());
}

TEST_F(ApiHandlerTest, DevJoinRefusesUnknownFieldsByName) {
  HttpResponse r =
      Call("POST", "/api/dev/join",
           R"({"shard":"arena-1","kind":"counter","name":"al"})", nullptr);
  ExpectError(r, 400, "invalid_argument");
  const std::string message = Body(r).value("message", "");
  EXPECT_THAT(message, HasSubstr("unknown field \"name\""));
  EXPECT_THAT(message, HasSubstr("subscriber"));
  EXPECT_FALSE(store_.Record("arena-1").has_value());  // nothing was made
}

TEST_F(ApiHandlerTest, DevJoinIsOffOutsideDevMode) {
  handler_ = MakeHandler(/*dev_join=*/false);
  ExpectError(Call("POST", "/api/dev/join", R"({"shard":"a","kind":"counter"})",
                   nullptr),
              404, "not_found");
  EXPECT_TRUE(host_->List().empty());
}

TEST_F(ApiHandlerTest, StaticFiles) {
  HttpResponse r = Call("GET", "/", "", nullptr);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(r.body, "<h1>arena</h1>");
  r = Call("GET", "/index.html", "", nullptr);
  EXPECT_EQ(r.body, "<h1>arena</h1>");
  r = Call("GET", "/app.js?v=3", "", nullptr);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(r.body, "console.log(1)");
  r = Call("GET", "/sub/", "", nullptr);
  EXPECT_EQ(r.body, "sub index");
  r = Call("GET", "/sub", "", nullptr);
  EXPECT_EQ(r.body, "sub index");
  r = Call("GET", "/Logo.PNG", "", nullptr);
  EXPECT_EQ(r.content_type, "image/png");
  r = Call("GET", "/%61pp.js", "", nullptr);  // percent-decoded
  EXPECT_EQ(r.body, "console.log(1)");

  ExpectError(Call("GET", "/missing.html", "", nullptr), 404, "not_found");
  ExpectError(Call("POST", "/", "", nullptr), 405, "method_not_allowed");
  // No icon of the app's own: an empty answer browsers cache, not a 404.
  r = Call("GET", "/favicon.ico", "", nullptr);
  EXPECT_EQ(r.status, 204);
  EXPECT_TRUE(r.body.empty());
}

TEST_F(ApiHandlerTest, StaticFilesNeverLeaveTheWebFolder) {
  for (const char* target :
       {"/../secret.txt", "/sub/../../secret.txt", "/%2e%2e/secret.txt",
        "/%2E%2E%2Fsecret.txt", "/sub/..%2f..%2fsecret.txt", "/..%5csecret.txt",
        "/escape.txt", "/./index.html", "/%00", "/%zz", "/%2"}) {
    SCOPED_TRACE(target);
    HttpResponse r = Call("GET", target, "", nullptr);
    EXPECT_NE(r.status, 200);
    EXPECT_THAT(r.body, ::testing::Not(HasSubstr("top secret")));
  }
}

TEST_F(ApiHandlerTest, NoWebFolderMeansNotFound) {
  ApiOptions options;
  options.web_dir = temp_.path() / "absent";
  ApiHandler handler(options, directory_.get(), &metrics_, &connections_);
  HttpRequest request;
  request.method = "GET";
  request.target = "/";
  ExpectError(handler.Handle(request), 404, "not_found");
}

TEST_F(ApiHandlerTest, UnknownRoutesAndWrongMethods) {
  ExpectError(Call("GET", "/api/nope"), 404, "not_found");
  ExpectError(Call("GET", "/api"), 404, "not_found");
  ExpectError(Call("POST", "/api/shards/c1/frob"), 404, "not_found");
  ExpectError(Call("GET", "/api/shards/c1/stop/now"), 404, "not_found");
  ExpectError(Call("DELETE", "/api/shards"), 405, "method_not_allowed");
  ExpectError(Call("POST", "/api/shards/c1"), 405, "method_not_allowed");
  ExpectError(Call("GET", "/api/shards/c1/stop"), 405, "method_not_allowed");
  ExpectError(Call("PUT", "/metrics"), 405, "method_not_allowed");
  ExpectError(Call("GET", "no-slash"), 400, "bad_target");
  // A wrong method is reported even without a token; a missing token before
  // anything about the shard.
  ExpectError(Call("GET", "/api/shards/c1/stop", "", nullptr), 405,
              "method_not_allowed");
  ExpectError(Call("POST", "/api/shards/nope/stop", "", nullptr), 401,
              "unauthorized");
}

}  // namespace
}  // namespace tessera::server::api_test
