// Routing, authentication and body parsing; the shard routes themselves
// are in shard_routes.cc.
#include "server/api_handler.h"

#include <optional>
#include <utility>

#include "server/bearer_auth.h"
#include "server/dashboard_page.h"
#include "server/http_json.h"
#include "server/metrics_page.h"
#include "server/request_target.h"

namespace tessera::server {

using json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

namespace {

HttpResponse NoRoute(const std::string& path) {
  return ErrorResponse(404, "not_found", "no route " + path);
}

HttpResponse Unauthorized() { return AdminTokenRequired(); }

// The body as a JSON object; an empty body is {}. On failure fills `error`.
std::optional<json> ParseObject(const std::string& body, HttpResponse* error) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) {
    return json::object();
  }
  json value = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    *error = ErrorResponse(400, "bad_json", "the body is not valid JSON");
    return std::nullopt;
  }
  if (!value.is_object()) {
    *error = ErrorResponse(400, "bad_json", "the body must be a JSON object");
    return std::nullopt;
  }
  return value;
}

}  // namespace

ApiHandler::ApiHandler(ApiOptions options, ShardDirectory* directory,
                       Metrics* metrics, net::Connections* connections)
    : options_(std::move(options)),
      wall_clock_(options_.wall_clock != nullptr ? *options_.wall_clock
                                                 : *RealWallClock::Get()),
      directory_(directory),
      metrics_(metrics),
      connections_(connections),
      host_metrics_(metrics, directory),
      web_([this] {
        std::vector<WebMount> mounts = options_.mounts;
        if (!options_.web_dir.empty()) {
          mounts.push_back(WebMount{"/", options_.web_dir});
        }
        return mounts;
      }()) {}

bool ApiHandler::Knows(const std::string& id) const {
  return directory_->host()->Get(id).has_value() ||
         directory_->FailedRecord(id).has_value();
}

HttpResponse ApiHandler::Handle(const HttpRequest& request) {
  std::optional<RequestTarget> target = ParseTarget(request.target);
  if (!target) {
    return ErrorResponse(400, "bad_target",
                         "the request target is not a valid path");
  }
  const Segments& segments = target->segments;
  const bool get = request.method == "GET" || request.method == "HEAD";
  if (segments.size() == 1 && segments[0] == "healthz") {
    if (!get) return MethodNotAllowed(request.method, "GET");
    return JsonResponse(200, json{{"status", "ok"}});
  }
  if (segments.size() == 1 && segments[0] == "metrics") {
    if (!get) return MethodNotAllowed(request.method, "GET");
    return HandleMetrics(request);
  }
  if (!segments.empty() && segments[0] == "_dashboard") {
    return HandleDashboard(request, segments);
  }
  if (!segments.empty() && segments[0] == "api") {
    return HandleApi(request, segments);
  }
  if (!get) return MethodNotAllowed(request.method, "GET");
  HttpResponse page = web_.Serve(target->path);
  if (page.status == 404 && target->path == "/favicon.ico") {
    // Browsers ask on every page; without an icon of the app's own, an
    // empty answer they may cache rather than a 404 in every log.
    HttpResponse none;
    none.status = 204;
    none.headers.emplace_back("Cache-Control", "max-age=86400");
    return none;
  }
  return page;
}

HttpResponse ApiHandler::HandleMetrics(const HttpRequest& request) {
  host_metrics_.Refresh();
  if (options_.refresh_metrics) options_.refresh_metrics();
  HttpResponse r;
  r.status = 200;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = metrics_->Render();
  const auto accept = request.headers.find("accept");
  const auto query = ParseQuery(request.target);
  const bool text =
      query && query->contains("format") && query->at("format") == "text";
  if (!text && accept != request.headers.end() && AcceptsHtml(accept->second)) {
    r.content_type = "text/html; charset=utf-8";
    r.body = MetricsPage(r.body);
  }
  return r;
}

HttpResponse ApiHandler::HandleDashboard(const HttpRequest& request,
                                         const Segments& s) {
  const bool page = s.size() == 1;
  if (!page && !(s.size() == 2 && s[1] == "app.js")) {
    return NoRoute(request.target);
  }
  if (request.method != "GET" && request.method != "HEAD") {
    return MethodNotAllowed(request.method, "GET");
  }
  HttpResponse r;
  r.status = 200;
  r.content_type =
      page ? "text/html; charset=utf-8" : "text/javascript; charset=utf-8";
  r.body = std::string(page ? DashboardPage() : DashboardScript());
  // A new server build may bring a new page: browsers ask again each time.
  r.headers.emplace_back("Cache-Control", "no-cache");
  return r;
}

HttpResponse ApiHandler::HandleApi(const HttpRequest& request,
                                   const Segments& s) {
  const std::string& method = request.method;
  HttpResponse error;

  if (options_.dev_join && s.size() == 3 && s[1] == "dev" && s[2] == "join") {
    if (method != "POST") return MethodNotAllowed(method, "POST");
    std::optional<json> body = ParseObject(request.body, &error);
    return body ? DevJoin(*body) : error;
  }
  if (s.size() == 2 && s[1] == "publish") {
    if (method != "POST") return MethodNotAllowed(method, "POST");
    if (!HasBearerToken(request, options_.admin_token)) return Unauthorized();
    std::optional<json> body = ParseObject(request.body, &error);
    return body ? Publish(*body) : error;
  }
  if (s.size() < 2 || s[1] != "shards" || s.size() > 4) {
    return NoRoute(request.target);
  }

  // The shard routes; the method is checked before the token so a client
  // learns about a wrong method without a token, never about shards.
  enum class Route {
    kCollection,
    kShard,
    kAction
  } route = s.size() == 2   ? Route::kCollection
            : s.size() == 3 ? Route::kShard
                            : Route::kAction;
  static constexpr const char* kActions[] = {"kick", "stop", "tickets",
                                             "inputs", "transfer"};
  const bool log = route == Route::kAction && s[3] == "log";
  if (log) {
    if (method != "GET") return MethodNotAllowed(method, "GET");
  } else if (route == Route::kAction) {
    bool known = false;
    for (const char* a : kActions) known = known || s[3] == a;
    if (!known) return NoRoute(request.target);
    if (method != "POST") return MethodNotAllowed(method, "POST");
  } else if (route == Route::kShard) {
    if (method != "GET") return MethodNotAllowed(method, "GET");
  } else if (method != "GET" && method != "POST") {
    return MethodNotAllowed(method, "GET, POST");
  }
  if (!HasBearerToken(request, options_.admin_token)) return Unauthorized();

  if (route == Route::kCollection && method == "GET") return ListShards();
  if (route == Route::kShard) return GetShard(s[2]);
  if (log) return ShardLog(s[2]);
  std::optional<json> body = ParseObject(request.body, &error);
  if (!body) return error;
  if (route == Route::kCollection) return CreateShard(*body);
  const std::string& id = s[2];
  const std::string& action = s[3];
  if (action == "kick") return Kick(id, *body);
  if (action == "stop") return StopShard(id);
  if (action == "tickets") return MintTicket(id, *body);
  if (action == "transfer") return Transfer(id, *body);
  return SubmitInput(id, *body);
}

}  // namespace tessera::server
