// ComputeService: the compute modules of an app server (docs/compute.md).
// Owns the compute store (SQLite in the app's state dir:
// store::OpenComputeStore), the source compiler (the toolchain one), the
// NotifySink (net/notify_fanout over the shard connections) and the
// ComputeEngine over them, and serves the compute API:
//
//   /api/compute/...           every operation of the seed (compute_routes.cc;
//                              the table in docs/compute.md), guarded by
//                              scoped tokens (api_tokens.h): view routes
//                              need view_compute_diagnostics, the others
//                              manage_compute; invoke takes a management
//                              token or a signed tessera ticket of any
//                              resource (the player: its subscriber id)
//   POST /api/dev/player-token {userId} -> {ticket, userId, expires}: dev
//                              mode only, no token; a ticket of resource
//                              kind "player", id "*"
//
// Metrics (ComputeMetrics, brought up to date by RefreshMetrics before
// each /metrics render): tessera_compute_runs_total,
// tessera_compute_failures_total, tessera_compute_ticks_total,
// tessera_compute_fuel_used_total, tessera_compute_cpu_microseconds_total,
// tessera_compute_egress_messages_total, tessera_compute_egress_bytes_total,
// tessera_compute_egress_refused_total, tessera_compute_circuit_opens_total
// (counters) and tessera_compute_loaded_modules,
// tessera_compute_compile_queue (gauges).
//
// Boot: Start() starts the engine (resuming unfinished compiles), then
// SyncManifest() brings the manifest's compute section in: each module
// upserted, a new version deployed when its source hash differs from the
// latest version's (enabled once it compiles when the manifest says
// "enabled"), its triggers upserted.
//
// Threading: construction, RegisterRoutes, Start, SyncManifest and
// Shutdown from the controlling thread; Handle and RefreshMetrics from any
// thread (the engine is thread-safe).
#ifndef TESSERA_SERVER_COMPUTE_SERVICE_H_
#define TESSERA_SERVER_COMPUTE_SERVICE_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "app/manifest.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "compute/compute_store.h"
#include "compute/engine.h"
#include "compute/notify_sink.h"
#include "compute/source_compiler.h"
#include "net/http_types.h"
#include "server/api_tokens.h"
#include "server/service.h"

namespace tessera::server {

class JoinRoutes;  // function_routes.h

struct ComputeServiceOptions {
  ApiTokens tokens;           // the admin token and the scoped ones
  std::string ticket_secret;  // verifies players' tickets; mints dev ones
  bool dev = false;           // serve POST /api/dev/player-token
  // Unix time for tickets; null: RealWallClock. Not owned.
  const WallClock* wall_clock = nullptr;
  // The engine's options; store, compiler and notify are the service's.
  compute::EngineOptions engine;
};

// The compute counters and gauges on /metrics (see the file comment).
class ComputeMetrics {
 public:
  explicit ComputeMetrics(Metrics* metrics);
  // Adds what the engine counted since the last call.
  void Update(const compute::ComputeEngine::Counters& now,
              int64_t compile_queue);

 private:
  Counter* runs_;
  Counter* failures_;
  Counter* ticks_;
  Counter* fuel_;
  Counter* cpu_us_;
  Counter* egress_msgs_;
  Counter* egress_bytes_;
  Counter* egress_refused_;
  Counter* circuit_opens_;
  Gauge* loaded_;
  Gauge* compile_queue_;
  std::mutex mu_;
  compute::ComputeEngine::Counters seen_ GUARDED_BY(mu_);
};

class ComputeService final : public Service, public net::HttpHandler {
 public:
  // `notify` may be null (emits reach nobody; only alwaysOn modules load).
  ComputeService(std::unique_ptr<compute::ComputeStore> store,
                 std::unique_ptr<compute::SourceCompiler> compiler,
                 std::unique_ptr<compute::NotifySink> notify, Metrics& metrics,
                 ComputeServiceOptions options);
  // Shutdown().
  ~ComputeService() override;

  // "/api/compute" (and "/api/dev/player-token" in dev mode).
  void RegisterRoutes(net::Router& router) override;
  net::HttpResponse Handle(const net::HttpRequest& request) override;

  // Starts the engine. Errors: the engine's.
  Status Start();
  // The manifest's compute section (see the file comment); `log` gets one
  // line per deploy. Errors: kInvalidArgument naming the manifest entry
  // (a trigger body, an unreadable source directory), the engine's.
  Status SyncManifest(const app::Manifest& manifest,
                      const std::function<void(const std::string&)>& log);
  // Brings the /metrics counters up to date.
  void RefreshMetrics();
  // Stops the engine (ticks, flush, compile queue). Idempotent.
  void Shutdown();

  compute::ComputeEngine& engine() { return *engine_; }

 private:
  // compute_routes.cc
  net::HttpResponse Route(const net::HttpRequest& request);
  net::HttpResponse DevPlayerToken(const net::HttpRequest& request);

  const ComputeServiceOptions options_;
  const WallClock& wall_clock_;
  std::unique_ptr<compute::ComputeStore> store_;
  std::unique_ptr<compute::SourceCompiler> compiler_;
  std::unique_ptr<compute::NotifySink> notify_;
  std::unique_ptr<compute::ComputeEngine> engine_;
  ComputeMetrics metrics_;
  // POST /api/functions/<name> and /api/auth/guest (function_routes.h).
  std::unique_ptr<JoinRoutes> join_routes_;
  bool shut_down_ = false;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_COMPUTE_SERVICE_H_
