// ApiHandler: every HTTP request that is not a WebSocket session.
//
//   GET  /healthz                       200 {"status":"ok"}
//   GET  /metrics                       Prometheus text (shard gauges are
//                                       refreshed from the host first;
//                                       counters: see host_metrics.h)
//   GET  /_dashboard, /_dashboard/app.js the dashboard's page and script
//                                       (dashboard_page.h), no token
//   Admin API, "Authorization: Bearer <admin token>" (401 otherwise):
//   GET  /api/shards                    [{id, kind, status, tick, subscribers}]
//   POST /api/shards                    {kind, id, params?} -> 201 summary;
//                                       409 already_exists, 404 unknown_kind,
//                                       503 capacity, 400 bad input or the
//                                       module's refusal of the params
//   GET  /api/shards/<id>               summary + subscriber_ids, limits,
//                                       fuel_used, overruns, queued_inputs,
//                                       stop_reason, stop_message, last_error
//                                       (a stopped shard: for 5 s, a failed
//                                       one for HostOptions::
//                                       failed_retention_us, 5 min in
//                                       AppServer)
//   GET  /api/shards/<id>/log           {lines: [{level, text}]}: the
//                                       guest's recent log lines, oldest
//                                       first ([] for a failed record)
//   POST /api/shards/<id>/kick          {subscriber} -> {closed: n}
//   POST /api/shards/<id>/stop          stops, closes every connection
//                                       (4006), forgets the record
//   POST /api/shards/<id>/tickets       {subscriber, ttl_secs?, claims?}
//                                       -> {ticket, expires}
//   POST /api/shards/<id>/inputs        {input} -> 202 {seq}: a server-side
//                                       input (empty subscriber id)
//   POST /api/shards/<from>/transfer    {subscriber, to, claims?} moves a
//                                       player (ShardHost::Transfer; claims
//                                       for the target's transfer_in and
//                                       ticket) and waits for the outcome:
//                                       200 {moved: true, to}; 409
//                                       SHARD_TRANSFER_REFUSED (the target
//                                       module's text) or _BUSY; 404
//                                       SHARD_NOT_FOUND (either shard) or
//                                       SHARD_TRANSFER_NO_PLAYER; 400
//                                       SHARD_TRANSFER_UNSUPPORTED or
//                                       INVALID_ARGUMENT; 500
//                                       SHARD_TRANSFER_FAILED; 504
//                                       SHARD_TRANSFER_TIMEOUT after
//                                       transfer_timeout_ms (10 s)
//   POST /api/publish                   {to: "all" | {shard: id} |
//                                       {group: name}, topic, data |
//                                       data_base64} -> 200 {delivered,
//                                       refused}: a message from the server
//                                       (from "") to shards' on_message;
//                                       `data` a string (its UTF-8 bytes) or
//                                       any JSON (compact text),
//                                       `data_base64` binary
//   Dev mode only, no token:
//   POST /api/dev/join                  {shard, kind?, params?, subscriber?,
//                                       claims?} -> {shardId, subscriberId,
//                                       ticket}
//   GET  /<anything else>               the app's web/ folder and mounts
//
// JSON values (params, inputs) are converted to the kind's codec. Every
// error is {"code", "message"}; unknown routes 404, wrong methods 405.
//
// Thread-safety: Handle is called on network threads, concurrently; it
// only reads immutable options, calls thread-safe dependencies and never
// blocks beyond a module's init (shard creation) or a move's outcome (at
// most transfer_timeout_ms). Ownership: `directory`,
// `metrics` and `connections` are not owned and must outlive the handler.
#ifndef TESSERA_SERVER_API_HANDLER_H_
#define TESSERA_SERVER_API_HANDLER_H_

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "net/connections.h"
#include "net/http_types.h"
#include "server/host_metrics.h"
#include "server/service.h"
#include "server/shard_directory.h"
#include "server/web_mounts.h"

namespace tessera::server {

struct ApiOptions {
  std::string admin_token;        // empty: the admin API refuses everyone
  std::string ticket_secret;      // signs tickets (tickets and dev join)
  bool dev_join = false;          // serve POST /api/dev/join
  std::filesystem::path web_dir;  // served at "/"; empty or missing: none
  std::vector<WebMount> mounts;   // more folders under URL prefixes
  // Unix time of ticket expiry; null: RealWallClock. Not owned; must
  // outlive the handler.
  const WallClock* wall_clock = nullptr;
  int64_t max_ticket_ttl_secs = 7 * 24 * 3600;
  // How long POST .../transfer waits for the move's outcome (then 504).
  int64_t transfer_timeout_ms = 10'000;
  // Called before each /metrics render (other services' counters, e.g.
  // ComputeService::RefreshMetrics); may be empty. Any thread.
  std::function<void()> refresh_metrics;
};

class ApiHandler final : public net::HttpHandler, public Service {
 public:
  ApiHandler(ApiOptions options, ShardDirectory* directory, Metrics* metrics,
             net::Connections* connections);

  // Service: every HTTP request ("/").
  void RegisterRoutes(net::Router& router) override {
    router.AddHttp("/", *this);
  }

  net::HttpResponse Handle(const net::HttpRequest& request) override;

 private:
  using Segments = std::vector<std::string>;

  net::HttpResponse HandleApi(const net::HttpRequest& request,
                              const Segments& segments);
  // GET /_dashboard (the page) and /_dashboard/app.js (dashboard_page.h);
  // no token.
  net::HttpResponse HandleDashboard(const net::HttpRequest& request,
                                    const Segments& segments);
  // The exposition text, or for a browser (Accept: text/html, without
  // ?format=text) the page of metrics_page.h.
  net::HttpResponse HandleMetrics(const net::HttpRequest& request);

  // Admin routes (shard_routes.cc); `body` is the parsed JSON object.
  net::HttpResponse ListShards();
  net::HttpResponse CreateShard(const nlohmann::json& body);
  net::HttpResponse GetShard(const std::string& id);
  net::HttpResponse ShardLog(const std::string& id);
  net::HttpResponse Kick(const std::string& id, const nlohmann::json& body);
  net::HttpResponse StopShard(const std::string& id);
  net::HttpResponse MintTicket(const std::string& id,
                               const nlohmann::json& body);
  net::HttpResponse SubmitInput(const std::string& id,
                                const nlohmann::json& body);
  net::HttpResponse Transfer(const std::string& from,
                             const nlohmann::json& body);
  net::HttpResponse Publish(const nlohmann::json& body);
  net::HttpResponse DevJoin(const nlohmann::json& body);

  // True when the host lists the shard or the directory has it failed.
  bool Knows(const std::string& id) const;
  // Unix seconds (ticket expiry).
  int64_t UnixNow() const { return wall_clock_.UnixNowSecs(); }

  const ApiOptions options_;
  const WallClock& wall_clock_;
  ShardDirectory* const directory_;
  Metrics* const metrics_;
  net::Connections* connections_;
  HostMetrics host_metrics_;
  WebMounts web_;
  std::atomic<uint64_t> next_server_seq_{1};
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_API_HANDLER_H_
