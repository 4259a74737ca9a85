#include "server/realm_service.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "net/ticket.h"
#include "server/bearer_auth.h"
#include "server/env_config.h"
#include "server/http_json.h"
#include "server/random_token.h"
#include "server/realm_module.h"
#include "server/request_target.h"
#include "store/store.h"

namespace tessera::server {
namespace {

using nlohmann::json;

constexpr char kEnvRealmSecurity[] = "TESSERA_REALM_SECURITY";
constexpr int64_t kMaxTicketSecs = 24 * 3600;

}  // namespace

Result<realm::SecurityFloor> RealmFloorFromEnv() {
  std::optional<std::string> text = EnvString(kEnvRealmSecurity);
  if (!text || *text == "authenticated") {
    return realm::SecurityFloor::kAuthenticated;
  }
  if (*text == "encrypted") return realm::SecurityFloor::kEncrypted;
  return Status(StatusCode::kInvalidArgument,
                std::string(kEnvRealmSecurity) +
                    ": expected \"authenticated\" or \"encrypted\", got \"" +
                    *text + "\" (there is no lower tier)");
}

Result<std::unique_ptr<RealmService>> RealmService::Start(
    std::vector<realm::RealmKindConfig> kinds, const std::string& database_url,
    RealmServiceOptions options) {
  std::unique_ptr<realm::RealmStore> store;
  for (const realm::RealmKindConfig& kind : kinds) {
    if (kind.persistence != realm::Persistence::kDurable) continue;
    Result<std::unique_ptr<realm::RealmStore>> opened =
        store::OpenRealmStore(database_url);
    if (!opened.ok()) return opened.status();
    store = std::move(opened).value();
    break;
  }
  std::vector<std::pair<std::string, std::string>> expiring;  // (kind, key)
  for (const realm::RealmKindConfig& kind : kinds) {
    if (!kind.expire_after_idle_ms || store == nullptr) continue;
    Result<std::vector<std::string>> ids = store->List(kind.name);
    if (!ids.ok()) return ids.status();
    for (const std::string& id : *ids) {
      expiring.emplace_back(kind.name, id.substr(id.find('/') + 1));
    }
  }
  auto service = std::unique_ptr<RealmService>(
      new RealmService(std::move(kinds), std::move(store), std::move(options)));
  // Nobody is attached at boot: every stored instance's idle period starts.
  for (const auto& [kind, key] : expiring) service->host_->ArmExpiry(kind, key);
  // Alarms outlive the process: those due while it was down fire now.
  TESSERA_RETURN_IF_ERROR(service->host_->LoadAlarms());
  return service;
}

RealmService::RealmService(std::vector<realm::RealmKindConfig> kinds,
                           std::unique_ptr<realm::RealmStore> store,
                           RealmServiceOptions options)
    : options_(std::move(options)), store_(std::move(store)) {
  for (const realm::RealmKindConfig& kind : kinds) {
    kind_names_.push_back(kind.name);
  }
  hooks_ = std::make_unique<ModuleRealmHooks>(options_.engine, options_.log);
  guest::WorkerPoolOptions pool;
  pool.threads = options_.workers;
  pool_ = std::make_unique<guest::WorkerPool>(pool);
  realm::RealmHostOptions host;
  host.pool = pool_.get();
  host.store = store_.get();
  host.log = options_.log;
  host.hooks = hooks_.get();
  host.metrics = options_.metrics;
  host_ = std::make_unique<realm::RealmHost>(std::move(kinds), std::move(host));
  sessions_ = std::make_unique<net::RealmSessions>(*host_, options_.floor);
}

RealmService::~RealmService() { Shutdown(); }

void RealmService::Shutdown() {
  if (host_) host_->Shutdown();
  if (pool_) pool_->Shutdown();
}

void RealmService::RegisterRoutes(net::Router& router) {
  router.AddSession(net::kRealmPathPrefix, sessions_->factory());
  router.AddHttp("/api/realms", *this);
}

net::HttpResponse RealmService::Handle(const net::HttpRequest& request) {
  std::optional<RequestTarget> target = ParseTarget(request.target);
  if (!target) return ErrorResponse(400, "bad_request", "bad request target");
  const std::vector<std::string>& parts = target->segments;  // "api", "realms"
  if (parts.size() == 2) {
    if (request.method != "GET") {
      return ErrorResponse(405, "method_not_allowed", "use GET");
    }
    if (!HasBearerToken(request, options_.admin_token)) {
      return ErrorResponse(401, "unauthorized", "the admin token is required");
    }
    json kinds = json::array();
    for (const std::string& name : kind_names_) {
      std::shared_ptr<const realm::RealmKindConfig> kind =
          host_->FindKind(name);
      kinds.push_back(
          {{"name", name},
           {"persistence", kind->persistence == realm::Persistence::kDurable
                               ? "durable"
                               : "ephemeral"},
           {"security", realm::SecurityFloorName(realm::EffectiveFloor(
                            kind->security, options_.floor))}});
    }
    return JsonResponse(
        200, {{"kinds", kinds}, {"instances", host_->instance_count()}});
  }
  if (parts.size() == 5 && (parts[4] == "tickets" || parts[4] == "join")) {
    if (request.method != "POST") {
      return ErrorResponse(405, "method_not_allowed", "use POST");
    }
    const bool dev_join = parts[4] == "join";
    if (dev_join && !options_.dev) {
      return ErrorResponse(404, "not_found",
                           "the realm dev join is served by tessera dev only");
    }
    if (!dev_join && !HasBearerToken(request, options_.admin_token)) {
      return ErrorResponse(401, "unauthorized", "the admin token is required");
    }
    return Ticket(request, parts[2], parts[3], dev_join);
  }
  if (parts.size() == 5 && (parts[4] == "update" || parts[4] == "alarms")) {
    const bool update = parts[4] == "update";
    if (request.method != (update ? "POST" : "GET")) {
      return ErrorResponse(405, "method_not_allowed",
                           update ? "use POST" : "use GET");
    }
    if (!HasBearerToken(request, options_.admin_token)) {
      return ErrorResponse(401, "unauthorized", "the admin token is required");
    }
    if (host_->FindKind(parts[2]) == nullptr) {
      return ErrorResponse(404, "not_found",
                           "no realm kind \"" + parts[2] + "\"");
    }
    if (!realm::RealmHost::ValidKey(parts[3])) {
      return ErrorResponse(400, "bad_request",
                           "a realm key is 1 to 128 bytes of [A-Za-z0-9_.:-]");
    }
    return update ? Update(request, parts[2], parts[3])
                  : Alarms(parts[2], parts[3]);
  }
  return ErrorResponse(404, "not_found",
                       "no such realm route: " + target->path);
}

net::HttpResponse RealmService::Update(const net::HttpRequest& request,
                                       const std::string& kind,
                                       const std::string& key) {
  json body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("patch") || body.size() != 1) {
    return ErrorResponse(400, "bad_request",
                         "the body must be {\"patch\": [ops]} (docs/realms.md "
                         "\"JSON form\")");
  }
  Result<realm::Patch> patch = realm::PatchFromJson(body["patch"]);
  if (!patch.ok()) {
    return ErrorResponse(400, "bad_request", patch.status().message());
  }
  Result<int64_t> version = host_->Update(kind, key, std::move(patch).value());
  if (!version.ok()) {
    if (version.status().code() == StatusCode::kInvalidArgument) {
      return ErrorResponse(400, "bad_request", version.status().message());
    }
    return ErrorFromStatus(version.status());
  }
  return JsonResponse(200, {{"version", *version}});
}

net::HttpResponse RealmService::Alarms(const std::string& kind,
                                       const std::string& key) {
  json alarms = json::array();
  for (const realm::RealmAlarm& alarm : host_->Alarms(kind, key)) {
    alarms.push_back({{"name", alarm.name},
                      {"dueUnixMs", alarm.due_unix_ms},
                      {"failures", alarm.failures}});
  }
  return JsonResponse(200, {{"alarms", alarms}});
}

net::HttpResponse RealmService::Ticket(const net::HttpRequest& request,
                                       const std::string& kind,
                                       const std::string& key, bool dev_join) {
  if (host_->FindKind(kind) == nullptr) {
    return ErrorResponse(404, "not_found", "no realm kind \"" + kind + "\"");
  }
  if (!realm::RealmHost::ValidKey(key)) {
    return ErrorResponse(400, "bad_request",
                         "a realm key is 1 to 128 bytes of [A-Za-z0-9_.:-]");
  }
  json body = json::object();
  if (!request.body.empty()) {
    body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
    if (!body.is_object()) {
      return ErrorResponse(400, "bad_request",
                           "the body must be a JSON object");
    }
  }
  const std::vector<std::string> known =
      dev_join ? std::vector<std::string>{"subscriber"}
               : std::vector<std::string>{"subscriber", "ttlSecs", "claims"};
  for (const auto& [field, value] : body.items()) {
    if (std::find(known.begin(), known.end(), field) == known.end()) {
      return ErrorResponse(
          400, "bad_request",
          "unknown field \"" + field + "\" (known: " +
              (dev_join ? "subscriber" : "subscriber, ttlSecs, claims") + ")");
    }
  }
  std::string subscriber;
  if (body.contains("subscriber")) {
    if (!body["subscriber"].is_string() ||
        !IsValidSubscriberId(body["subscriber"].get<std::string>())) {
      return ErrorResponse(400, "bad_request",
                           "subscriber: 1 to 128 bytes, no control characters");
    }
    subscriber = body["subscriber"].get<std::string>();
  } else if (dev_join) {
    Result<std::string> hex = RandomHex(8);
    if (!hex.ok()) return ErrorFromStatus(hex.status());
    subscriber = "guest-" + *hex;
  } else {
    return ErrorResponse(400, "bad_request", "subscriber is required");
  }
  int64_t ttl = net::kDefaultTicketLifetimeSecs;
  if (body.contains("ttlSecs")) {
    if (!body["ttlSecs"].is_number_integer() ||
        body["ttlSecs"].get<int64_t>() < 1 ||
        body["ttlSecs"].get<int64_t>() > kMaxTicketSecs) {
      return ErrorResponse(400, "bad_request",
                           "ttlSecs: an integer in 1..86400");
    }
    ttl = body["ttlSecs"].get<int64_t>();
  }
  json claims = json::object();
  if (body.contains("claims")) {
    if (!body["claims"].is_object()) {
      return ErrorResponse(400, "bad_request", "claims: a JSON object");
    }
    claims = body["claims"];
  }
  const WallClock& clock = options_.wall_clock != nullptr
                               ? *options_.wall_clock
                               : *RealWallClock::Get();
  net::Ticket ticket;
  ticket.resource_kind = "realm";
  ticket.resource_id = kind + "/" + key;
  ticket.subscriber_id = subscriber;
  ticket.expires_unix = clock.UnixNowSecs() + ttl;
  ticket.claims_json = claims.dump();
  return JsonResponse(
      200, {{"ticket", net::MintTicket(options_.ticket_secret, ticket, &clock)},
            {"subscriber", subscriber},
            {"url", std::string(net::kRealmPathPrefix) + kind + "/" + key},
            {"expires", ticket.expires_unix}});
}

}  // namespace tessera::server
