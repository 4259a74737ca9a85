// AppServer: one app served on one port: the composition root. The apps'
// manifests are merged (app::LoadAppSet), their kinds loaded (built in dev
// mode), and the object graph is built leaf-first, each object getting
// what it needs in its constructor:
//
//   Metrics, Store, KindRegistry, StopNotifier            (leaves)
//   DataService(DataStore = store::OpenDataStore (the same store URL:
//               SQLite or PostgreSQL, connections of its own), the
//               manifests' merged "data"
//               schema, applied at its Start: a change that is not additive
//               fails the boot with its message): routes /api/data
//   CallRunner(DataStore)   the shards' keyed calls (call_runner.h)
//   EntityWriter(DataStore) the shards' entity writes (entity_writer.h)
//   ShardService: ShardHost(HostOptions::calls = CallRunner, writes =
//                   EntityWriter) --(frames, stops)--> ShardObservers:
//                   1. StopFunctions (a kind's onStop function)
//                   2. net::ShardConnections (the server's fan-out to
//                      connections, via Observe)
//                   3. ForgetStopped --> ShardDirectory
//                   4. StopNotices --> StopNotifier (onStop http(s) POST)
//                   5. StopLog --> ShardEventMetrics, guest::LogDrain
//                 ShardHost --(guest log lines)--> guest::LogDrain -> stderr
//                 ShardHost --(ticks: wall, CPU, fuel)--> ShardEventMetrics
//                 ShardDirectory --> ShardHost; ShardHostGateway --> ShardHost
//   net::Router   (filled by the services' RegisterRoutes)
//   net::Server(Router, ShardGateway): WebSocket upgrades by path prefix
//                 ("/shard/" -> the shard sessions -> ShardHostGateway),
//                 other HTTP requests -> ApiHandler
//   ComputeShards(ShardDirectory, the server's ShardConnections, the ticket
//                 secret): the modules' `shards` calls (compute_shards.h)
//   ComputeService(ComputeStore = store::OpenComputeStore (the same
//                  SQLite file), SourceCompiler = the toolchain compiler
//                  (work dir .tessera/compute), NotifySink =
//                  net::NotifyFanout over the server's ShardConnections and
//                  the host, EngineOptions::data = the DataStore, ::shards =
//                  ComputeShards): owns the ComputeEngine; routes
//                  /api/compute (scoped tokens: TESSERA_API_TOKENS) and, in
//                  dev mode, /api/dev/player-token
//   then attached to the engine: CallRunner (and the host, to deliver
//   results), StopFunctions; DataService and EntityWriter changes ->
//   ComputeEngine::OnDataChanges (data events)
//   ApiHandler(ShardDirectory, Connections = the server's ShardConnections;
//              /metrics refreshes the compute counters first)
//
// A subsystem (Service, service.h) registers its own routes on the Router
// and its metrics when it is built (it takes the Metrics registry); adding
// compute functions or realms is adding one service here. The host's
// observers, the call runner and the entity writer and the routes all
// exist before the first shard is restored and before the server starts.
//
// Start applies the data schema, restores every shard of the store's
// directory, then the moves between shards that a crash interrupted (the
// store is also the transfer journal), starts the compute engine and syncs
// the manifest's compute section (compute_service.h); only then do the
// keyed calls, onStop functions and entity-write flushes run (calls queued
// by restored shards wait), and then it accepts connections. The host's own
// log lines (refused messages, failed moves, recovery, refused writes) go
// to stderr with the guests'. Shutdown (SIGTERM) stops ticking and saves
// every shard (flushing each one's entity writes), drains the writer, the
// call runner and the onStop queue, stops the compute engine (ticks, then
// the buffered runs, usage and logs are written), closes every connection
// with 1001 "server restarting: reconnect" and stops the notifier; the
// directory keeps the shards so the next start resumes them (their calls
// in flight are listed again and answered from the stored results).
//
// Threading: Start, Shutdown and the destructor from one controlling
// thread; everything else runs on the server's io threads, the host's
// workers and the runners' threads.
#ifndef TESSERA_SERVER_APP_SERVER_H_
#define TESSERA_SERVER_APP_SERVER_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "app/manifest.h"
#include "common/metrics.h"
#include "common/status.h"
#include "server/kind_reload.h"
#include "server/source_watcher.h"
#include "server/web_mounts.h"
#include "shard/shard_host.h"

namespace tessera::guest {
class LogDrain;
}
namespace tessera::net {
class ShardHostNotifyShards;
class Router;
class Server;
}  // namespace tessera::net
namespace tessera::shard {
class KindRegistry;
}  // namespace tessera::shard
namespace tessera::store {
class Store;
}

namespace tessera::server {

class ApiHandler;
class RealmService;
class ApiTokens;
class CallRunner;
class ClusterService;
class ComputeService;
class ComputeShards;
class DataService;
class EntityWriter;
class ShardService;
class WebTransportRoute;
class StopFunctions;
class StopNotifier;

inline constexpr char kRestartCloseReason[] = "server restarting: reconnect";

struct AppServerOptions {
  std::filesystem::path app_dir;
  std::string host = "127.0.0.1";
  uint16_t port = 4321;  // 0: an ephemeral port (see port())
  // Every store's URL (store::OpenStore): "sqlite:PATH" or
  // "postgres://..."; empty: "sqlite:<app_dir>/.tessera/tessera.db".
  std::string database_url;
  std::string ticket_secret;  // required
  std::string admin_token;    // required
  int64_t save_secs = 5;      // 0: save only at shutdown
  size_t capacity = 100;      // shards starting or running; 0 = unlimited
  bool dev = false;           // build source kinds first; /api/dev/join
  // One stderr line per shard started and per player joining or leaving
  // (tessera dev, unless --quiet); stops are logged either way.
  bool lifecycle_log = false;
  // Hot reload from the sources (tessera dev): a change to a built kind's
  // source directory rebuilds it and moves its running shards to the new
  // code (kind_reload.h). POST /api/kinds/<kind>/reload works either way.
  bool watch_sources = false;
  int workers = -1;  // shard workers; -1 = one per core
  // Scoped API tokens (api_tokens.h; TESSERA_API_TOKENS); empty: only the
  // admin token.
  std::string api_tokens;
  // Network threads; 0: env TESSERA_IO_THREADS, else half the cores (2
  // to 8).
  int io_threads = 0;
  // More apps served beside the first (dev): their kinds join the first's
  // (names must stay unique), their web/ folders are served at
  // "/<directory name>/"; state (store, secrets) stays with the first.
  std::vector<std::filesystem::path> more_app_dirs;
  // This process's machine in a cluster (postgres:// only; docs/cluster.md):
  // its id (empty: host:pid; env TESSERA_MACHINE_ID) and the address other
  // machines reach it at (empty: host:port; env TESSERA_ADVERTISE_ADDRESS).
  std::string machine_id;
  std::string advertise_address;
  // More static folders under URL prefixes (see web_mounts.h).
  std::vector<WebMount> mounts;
};

class AppServer {
 public:
  // Loads and starts everything (see the file comment), writing progress
  // and restore problems to `log` (which must outlive the server). Errors:
  // kFailedPrecondition without a ticket secret or admin token; the
  // manifest's, the builder's, the loader's, the store's and the server's
  // errors (kIo when the port is taken), a bad api_tokens entry or compute
  // ceiling (kInvalidArgument), the data store's and its schema's (a
  // change that is not additive: kFailedPrecondition naming it), the
  // compute store's and the manifest compute section's.
  static Result<std::unique_ptr<AppServer>> Start(AppServerOptions options,
                                                  std::ostream& log);
  // Shutdown().
  ~AppServer();
  AppServer(const AppServer&) = delete;
  AppServer& operator=(const AppServer&) = delete;

  // The bound port.
  uint16_t port() const;
  // The first app's manifest, with the kinds of every app served.
  const app::Manifest& manifest() const { return manifest_; }
  const AppServerOptions& options() const { return options_; }
  // The further apps' web/ folders, by URL prefix ("/zone"), in the order
  // given (the first app's web/ is at "/").
  const std::vector<WebMount>& app_web_mounts() const {
    return app_web_mounts_;
  }

  // See the file comment. Idempotent.
  void Shutdown();
  // What Shutdown did with the running shards (zeros before it).
  const shard::ShardHost::ShutdownReport& shutdown_report() const {
    return shutdown_report_;
  }

 private:
  AppServer(AppServerOptions options, std::ostream& log);
  Status Init();
  // The data service on the store at `database_url`, started (its schema
  // applied).
  Status BuildData(const std::string& database_url, const ApiTokens& tokens);
  // The compute service on the store at `database_url` (compute_service.h).
  Status BuildCompute(const std::string& database_url,
                      const std::filesystem::path& state_dir,
                      const ApiTokens& tokens);
  // With a postgres:// URL: the machine's membership (cluster_service.h),
  // joined before any shard starts. A no-op for SQLite.
  Status BuildCluster(const std::string& url);
  // Heartbeats and the fence; a fence stops the shards, a new join
  // restores them.
  void StartCluster();
  // One log line per kind whose onStop names no function of the app.
  void WarnUnknownStopFunctions();

  const AppServerOptions options_;
  std::ostream& log_;
  app::Manifest manifest_;
  std::vector<WebMount> app_web_mounts_;
  bool shut_down_ = false;
  shard::ShardHost::ShutdownReport shutdown_report_;
  // Declaration order is construction order; destruction runs backwards,
  // so everything outlives what points to it.
  Metrics metrics_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<shard::KindRegistry> kinds_;
  std::unique_ptr<guest::LogDrain> guest_log_;  // guest log lines -> stderr
  std::unique_ptr<StopNotifier> notifier_;
  std::unique_ptr<DataService> data_;
  // Before the shards: the host submits to them until it is gone.
  std::unique_ptr<CallRunner> calls_;
  std::unique_ptr<EntityWriter> writes_;
  std::unique_ptr<StopFunctions> stop_functions_;
  // Before the shards: their directory claims placements through it (its
  // threads, whose callbacks use the shards, end in Shutdown). Only with a
  // postgres:// database.
  std::unique_ptr<ClusterService> cluster_;
  std::unique_ptr<ShardService> shards_;
  std::unique_ptr<net::Router> router_;
  // Built after the server (whose shards() are the API's Connections) but
  // declared before it, so the server (stopped in Shutdown) goes first.
  std::unique_ptr<ApiHandler> api_;
  // Before the server (it is a route), after the shards (it moves them).
  std::unique_ptr<KindReloads> kind_reloads_;
  // Before the server: its realm sessions call the realm host.
  std::unique_ptr<RealmService> realms_;
  // A route that asks the server (declared before it, like api_).
  std::unique_ptr<WebTransportRoute> webtransport_route_;
  std::unique_ptr<net::Server> server_;
  // After the server: its fan-out (the NotifySink's) outlives them.
  std::unique_ptr<net::ShardHostNotifyShards> notify_shards_;
  // Before the engine, which calls it.
  std::unique_ptr<ComputeShards> compute_shards_;
  std::unique_ptr<ComputeService> compute_;
  // Last: it asks kind_reloads_ (tessera dev only).
  std::unique_ptr<SourceWatcher> watcher_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_APP_SERVER_H_
