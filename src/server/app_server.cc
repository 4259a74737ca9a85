#include "server/app_server.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "app/app_set.h"
#include "common/text.h"
#include "compute/policy.h"
#include "compute/source_compiler.h"
#include "guest/log_drain.h"
#include "net/notify_fanout.h"
#include "net/router.h"
#include "net/server.h"
#include "net/shard_fanout.h"
#include "server/api_handler.h"
#include "server/api_tokens.h"
#include "server/app_kinds.h"
#include "server/call_runner.h"
#include "server/cluster_service.h"
#include "server/compute_service.h"
#include "server/compute_shards.h"
#include "server/data_service.h"
#include "server/entity_writer.h"
#include "server/env_config.h"
#include "server/port_probe.h"
#include "server/realm_service.h"
#include "server/shard_service.h"
#include "server/stop_functions.h"
#include "server/stop_notifier.h"
#include "server/webtransport_route.h"
#include "shard/guest_shard.h"
#include "shard/kind_registry.h"
#include "store/store.h"
#include "store/store_url.h"

namespace tessera::server {
namespace fs = std::filesystem;

namespace {

void StderrLine(const std::string& line) { std::cerr << line + "\n"; }

// Half the cores, at least 2 (a big shard's frames then leave on two
// threads: they answer inputs sooner) and at most 8.
int DefaultIoThreads() {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(std::clamp(cores / 2, 2u, 8u));
}

}  // namespace

AppServer::AppServer(AppServerOptions options, std::ostream& log)
    : options_(std::move(options)), log_(log) {}

AppServer::~AppServer() { Shutdown(); }

Result<std::unique_ptr<AppServer>> AppServer::Start(AppServerOptions options,
                                                    std::ostream& log) {
  if (options.ticket_secret.empty() || options.admin_token.empty()) {
    return Status(StatusCode::kFailedPrecondition,
                  "a ticket secret and an admin token are required");
  }
  std::unique_ptr<AppServer> server(new AppServer(std::move(options), log));
  Status started = server->Init();
  if (!started.ok()) return started;
  return server;
}

Status AppServer::Init() {
  // Before the build and the store: a taken port fails at once, and a
  // second instance must not restore (and later save) shards that the
  // first one serves.
  TESSERA_RETURN_IF_ERROR(ProbeBind(options_.host, options_.port));
  Result<app::AppSet> apps =
      app::LoadAppSet(options_.app_dir, options_.more_app_dirs);
  if (!apps.ok()) return apps.status();
  manifest_ = std::move(apps->merged);
  const fs::path state_dir = options_.app_dir / ".tessera";
  std::error_code ec;
  fs::create_directories(state_dir, ec);
  if (ec) {
    return IoError("cannot create " + state_dir.string() + ": " + ec.message());
  }

  kinds_ = std::make_unique<shard::KindRegistry>();
  std::vector<KindSource> kind_sources;
  for (size_t i = 0; i < apps->apps.size(); ++i) {
    const app::AppEntry& app = apps->apps[i];
    const fs::path cache =
        i == 0 ? state_dir / "cache" : app.dir / ".tessera" / "cache";
    TESSERA_RETURN_IF_ERROR(
        LoadAppKinds(app.manifest, options_.dev, cache, kinds_.get(), log_));
    for (const app::ShardKindSpec& spec : app.manifest.kinds) {
      kind_sources.push_back(KindSource{app.manifest, spec, cache});
    }
  }
  std::vector<WebMount> mounts = options_.mounts;
  for (app::AppWebMount& mount : apps->web_mounts) {
    app_web_mounts_.push_back(WebMount{mount.prefix, mount.dir});
    mounts.push_back(WebMount{std::move(mount.prefix), std::move(mount.dir)});
  }

  const std::string url = options_.database_url.empty()
                              ? "sqlite:" + (state_dir / "tessera.db").string()
                              : options_.database_url;
  Result<std::unique_ptr<store::Store>> store = store::OpenStore(url);
  if (!store.ok()) return store.status();
  store_ = std::move(store).value();
  Result<ApiTokens> tokens =
      ApiTokens::Parse(options_.api_tokens, options_.admin_token);
  if (!tokens.ok()) return tokens.status();
  // The app's data first: the shards' calls and writes and the modules'
  // data ops need its tables.
  TESSERA_RETURN_IF_ERROR(BuildData(url, *tokens));

  // Guest log lines leave the shard workers at once: a bounded queue that
  // its own thread writes to stderr, each line cut, escaped and
  // rate-limited per shard (a stalled stderr stalls only that thread). The
  // lines workers log themselves (stops, directory errors) go through it
  // too.
  guest::LogDrainOptions log_options;
  log_options.max_line_bytes = shard::GuestShard::kMaxLogLineBytes;
  log_options.metrics = &metrics_;
  guest_log_ = std::make_unique<guest::LogDrain>(guest::LogDrain::WriteToStderr,
                                                 log_options);
  auto worker_log = [drain = guest_log_.get()](const std::string& line) {
    drain->PushLine(line);
  };

  // Leaf-first: each object gets what it needs in its constructor; the
  // shard host reports to observers (the directory, onStop, the stop log,
  // the network's fan-out) registered before its first shard; each service
  // registers its own routes on the router before the server starts.
  NotifierOptions notifier_options;
  notifier_options.log = StderrLine;
  notifier_ = std::make_unique<StopNotifier>(notifier_options, &metrics_);
  ShardServiceOptions shard_options;
  shard_options.host.workers = options_.workers;
  shard_options.host.save_interval_us = options_.save_secs * 1'000'000;
  shard_options.host.failed_retention_us = kFailedRetentionUs;
  // Kinds with "recordInputs" log here (tessera replay reads it).
  shard_options.host.input_log_dir = (state_dir / "inputlog").string();
  // Moves between shards are journaled in the store, with the saves.
  shard_options.host.journal = store_.get();
  // The host's own lines (refused messages, failed moves, recovery).
  shard_options.host.host_log =
      [drain = guest_log_.get()](std::string_view id, std::string_view line) {
        constexpr size_t kMax = shard::GuestShard::kMaxLogLineBytes;
        drain->PushLine("shard " + EscapeForLog(id, kMax) + ": " +
                        EscapeForLog(line, kMax));
      };
  shard_options.host.guest_log = [drain = guest_log_.get()](
                                     std::string_view id, int level,
                                     std::string_view text) {
    drain->Push("shard " + std::string(id), level, text);
  };
  shard_options.directory.capacity = options_.capacity;
  // Several machines on one database: the directory starts only the shards
  // placed here (docs/cluster.md).
  TESSERA_RETURN_IF_ERROR(BuildCluster(url));
  if (cluster_ != nullptr) shard_options.directory.placement = cluster_.get();
  shard_options.directory.log = worker_log;  // also called on workers
  if (options_.lifecycle_log)
    shard_options.directory.lifecycle_log = worker_log;
  shard_options.stop_log = worker_log;
  // The shards' keyed calls and entity writes; they run once the engine
  // is attached and started (below).
  CallRunnerOptions runner_options;
  runner_options.metrics = &metrics_;
  runner_options.log = worker_log;
  calls_ = std::make_unique<CallRunner>(&data_->store(), runner_options);
  EntityWriterOptions writer_options;
  writer_options.metrics = &metrics_;
  writer_options.log = worker_log;
  writes_ = std::make_unique<EntityWriter>(&data_->store(), writer_options);
  shard_options.host.calls = calls_.get();
  shard_options.host.writes = writes_.get();
  shards_ = std::make_unique<ShardService>(*kinds_, store_.get(), *notifier_,
                                           metrics_, std::move(shard_options));
  KindReloadsOptions reload_options;
  reload_options.build = options_.dev;
  reload_options.quick = options_.dev;
  reload_options.admin_token = options_.admin_token;
  reload_options.log = worker_log;
  kind_reloads_ = std::make_unique<KindReloads>(std::move(kind_sources),
                                                kinds_.get(), &shards_->host(),
                                                std::move(reload_options));
  StopFunctionsOptions stop_options;
  stop_options.log = worker_log;
  stop_functions_ =
      std::make_unique<StopFunctions>(shards_->host(), *kinds_, stop_options);
  shards_->Observe(*stop_functions_);

  net::ServerOptions net_options;
  net_options.host = options_.host;
  net_options.port = options_.port;
  Result<int64_t> io_threads = IntSetting(
      options_.io_threads > 0 ? std::optional<int64_t>(options_.io_threads)
                              : std::nullopt,
      "io threads", kEnvIoThreads, DefaultIoThreads(), 1, 64);
  if (!io_threads.ok()) return io_threads.status();
  net_options.io_threads = static_cast<int>(*io_threads);
  net_options.find_kind = net::FindKindIn(kinds_.get());
  if (options_.lifecycle_log) net_options.lifecycle_log = worker_log;
  Result<int> wt_port = WebTransportPortSetting(options_.dev);
  if (!wt_port.ok()) return wt_port.status();
  net_options.webtransport_port = *wt_port;
  router_ = std::make_unique<net::Router>();
  server_ =
      std::make_unique<net::Server>(net_options, options_.ticket_secret,
                                    *router_, &shards_->gateway(), &metrics_);
  webtransport_route_ =
      std::make_unique<WebTransportRoute>(WebTransportRoute::Source{
          [server = server_.get()] { return server->webtransport_port(); },
          [server = server_.get()] {
            return server->webtransport_cert_sha256();
          }});
  router_->AddHttp(kWebTransportPath, *webtransport_route_);
  shards_->Observe(server_->shards());

  ComputeShardsOptions port_options;
  port_options.ticket_secret = options_.ticket_secret;
  compute_shards_ = std::make_unique<ComputeShards>(
      shards_->directory(), &server_->shards(), std::move(port_options));
  TESSERA_RETURN_IF_ERROR(BuildCompute(url, state_dir, *tokens));
  compute::ComputeEngine* engine = &compute_->engine();
  auto on_changes = [engine](const std::vector<data::ChangeEvent>& changes) {
    engine->OnDataChanges(changes, "");
  };
  data_->set_on_changes(on_changes);
  writes_->set_on_changes(on_changes);
  calls_->Attach(engine, &shards_->host());
  stop_functions_->Attach(engine);

  ApiOptions api;
  api.refresh_metrics = [compute = compute_.get(), cluster = cluster_.get()] {
    compute->RefreshMetrics();
    if (cluster != nullptr) cluster->RefreshMetrics();
  };
  api.admin_token = options_.admin_token;
  api.ticket_secret = options_.ticket_secret;
  api.dev_join = options_.dev;
  api.web_dir = options_.app_dir / "web";
  api.mounts = std::move(mounts);
  api_ = std::make_unique<ApiHandler>(std::move(api), &shards_->directory(),
                                      &metrics_, &server_->shards());

  Result<realm::SecurityFloor> realm_floor = RealmFloorFromEnv();
  if (!realm_floor.ok()) return realm_floor.status();
  RealmServiceOptions realm_options;
  realm_options.admin_token = options_.admin_token;
  realm_options.ticket_secret = options_.ticket_secret;
  realm_options.dev = options_.dev;
  realm_options.floor = *realm_floor;
  realm_options.log = worker_log;
  realm_options.engine = &compute_->engine();
  realm_options.metrics = &metrics_;
  Result<std::unique_ptr<RealmService>> realms =
      RealmService::Start(manifest_.realms, url, std::move(realm_options));
  if (!realms.ok()) return realms.status();
  realms_ = std::move(realms).value();

  if (cluster_ != nullptr) cluster_->RegisterRoutes(*router_);
  for (Service* service : {static_cast<Service*>(shards_.get()),
                           static_cast<Service*>(data_.get()),
                           static_cast<Service*>(compute_.get()),
                           static_cast<Service*>(realms_.get()),
                           static_cast<Service*>(kind_reloads_.get()),
                           static_cast<Service*>(api_.get())}) {
    service->RegisterRoutes(*router_);
  }

  Result<RestoreReport> restored = shards_->Restore(
      [this](const std::string& line) { log_ << line << "\n"; });
  if (!restored.ok()) return restored.status();
  if (restored->restored + restored->created + restored->failed +
          restored->elsewhere >
      0) {
    log_ << "shards: " << restored->restored << " restored from a save, "
         << restored->created << " started from init, " << restored->failed
         << " failed";
    if (restored->elsewhere > 0) {
      log_ << ", " << restored->elsewhere << " running on other machines";
    }
    log_ << "\n";
  }

  if (cluster_ != nullptr) StartCluster();

  // Compute after the shards: modules may notify their players at once.
  TESSERA_RETURN_IF_ERROR(compute_->Start());
  TESSERA_RETURN_IF_ERROR(compute_->SyncManifest(
      manifest_, [this](const std::string& line) { log_ << line << "\n"; }));
  // The modules exist now: calls, onStop functions and writes run.
  calls_->Start();
  stop_functions_->Start();
  writes_->Start();
  WarnUnknownStopFunctions();

  notifier_->Start();
  TESSERA_RETURN_IF_ERROR(server_->Start());
  if (server_->webtransport_port() != 0) {
    log_ << "webtransport: udp port " << server_->webtransport_port()
         << " (development certificate; GET " << kWebTransportPath
         << " gives its hash)\n";
  }
  if (options_.watch_sources) {
    auto log = worker_log;
    watcher_ = std::make_unique<SourceWatcher>(
        kind_reloads_->WatchedDirs(),
        [reloads = kind_reloads_.get(), log](const std::string& kind) {
          log("source of shard kind " + kind + " changed: reloading");
          (void)reloads->Request(kind);
        });
  }
  return Status::Ok();
}

Status AppServer::BuildData(const std::string& database_url,
                            const ApiTokens& tokens) {
  Result<std::unique_ptr<data::DataStore>> store =
      store::OpenDataStore(database_url);
  if (!store.ok()) return store.status();
  DataServiceOptions options;
  options.tokens = tokens;
  options.schema = manifest_.data;
  data_ = std::make_unique<DataService>(std::move(store).value(),
                                        std::move(options));
  Status started = data_->Start();
  if (!started.ok()) {
    return Status(started.code(), "the app's data (tessera.json \"data\"): " +
                                      started.message());
  }
  return Status::Ok();
}

void AppServer::WarnUnknownStopFunctions() {
  for (const app::ShardKindSpec& kind : manifest_.kinds) {
    const std::string& on_stop = kind.config.on_stop;
    if (on_stop.empty() || IsStopUrl(on_stop)) continue;
    Result<compute::FunctionRef> ref =
        compute_->engine().ResolveFunction(on_stop);
    if (!ref.ok()) {
      log_ << "warning: shard kind \"" << kind.config.name << "\": onStop \""
           << on_stop << "\" is neither an http(s):// URL nor a function: "
           << ref.status().message() << "\n";
    }
  }
}

Status AppServer::BuildCompute(const std::string& database_url,
                               const fs::path& state_dir,
                               const ApiTokens& tokens) {
  ComputeServiceOptions options;
  options.tokens = tokens;
  options.ticket_secret = options_.ticket_secret;
  options.dev = options_.dev;
  compute::Policy ceilings = compute::DefaultCeilings();
  if (std::optional<std::string> text = EnvString(kEnvComputeCeilings)) {
    Result<compute::Policy> parsed = compute::ParseCeilings(*text);
    if (!parsed.ok()) {
      return InvalidArgument(std::string(kEnvComputeCeilings) + ": " +
                             parsed.status().message());
    }
    ceilings = *parsed;
  }
  options.engine.ceilings = ceilings;
  options.engine.data = &data_->store();
  options.engine.shards = compute_shards_.get();
  options.engine.cache_dir = state_dir / "compute" / "cache";
  std::error_code ec;
  fs::create_directories(options.engine.cache_dir, ec);
  if (ec) {
    return IoError("cannot create " + options.engine.cache_dir.string() + ": " +
                   ec.message());
  }
  options.engine.forward_log = [drain = guest_log_.get()](
                                   std::string_view module, int level,
                                   std::string_view text) {
    drain->Push("compute " + std::string(module), level, text);
  };
  Result<std::unique_ptr<compute::ComputeStore>> store =
      store::OpenComputeStore(database_url);
  if (!store.ok()) return store.status();
  notify_shards_ =
      std::make_unique<net::ShardHostNotifyShards>(shards_->host());
  compute::ToolchainOptions toolchain;
  toolchain.work_dir = state_dir / "compute";
  compute_ = std::make_unique<ComputeService>(
      std::move(store).value(),
      compute::MakeToolchainCompiler(std::move(toolchain)),
      std::make_unique<net::NotifyFanout>(server_->shards().fanout(),
                                          notify_shards_.get()),
      metrics_, std::move(options));
  return Status::Ok();
}

Status AppServer::BuildCluster(const std::string& url) {
  Result<store::StoreUrl> parsed = store::ParseStoreUrl(url);
  if (!parsed.ok() || parsed->backend != store::StoreUrl::Backend::kPostgres) {
    return Status::Ok();  // SQLite: one machine, no cluster
  }
  ClusterOptions cluster;
  cluster.database_url = url;
  cluster.self.id = options_.machine_id;
  cluster.self.address =
      !options_.advertise_address.empty()
          ? options_.advertise_address
          : options_.host + ":" + std::to_string(options_.port);
  cluster.self.capacity = static_cast<int64_t>(options_.capacity);
  cluster.admin_token = options_.admin_token;
  Result<std::unique_ptr<ClusterService>> opened = ClusterService::Open(
      std::move(cluster), &metrics_,
      [this](const std::string& line) { guest_log_->PushLine(line); });
  if (!opened.ok()) return opened.status();
  cluster_ = std::move(opened).value();
  // Before any shard starts: no shard runs without the machine's epoch.
  TESSERA_RETURN_IF_ERROR(cluster_->JoinAtBoot());
  // Every save from here on carries the machine's epoch.
  store_->GuardSaves(&cluster_->epoch_source(), cluster_->dead_after_ms());
  return Status::Ok();
}

void AppServer::StartCluster() {
  shard::ShardHost* host = &shards_->host();
  cluster_->Start(
      // The fence thread: flags and pokes only, and the players told at
      // once (a worker may be held in a save the database never answers:
      // its shard stops when the save's bound passes).
      [host, connections = &server_->shards()](std::string_view why) {
        host->Fence(why);
        for (const shard::ShardInfo& info : host->List()) {
          if (info.status == shard::ShardStatus::kStopped) continue;
          connections->OnStopped(info.id, shard::StopReason::kFenced, why);
        }
      },
      // Back under a new epoch: the shards start again from their saves.
      [this, host] {
        // The fence's stops first: a shard still running would refuse its
        // restore (kAlreadyExists) and then stop.
        for (int i = 0; i < 1000 && host->FencePending(); ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        host->Unfence();
        auto line = [this](const std::string& text) {
          guest_log_->PushLine(text);
        };
        Result<RestoreReport> restored = shards_->Restore(line);
        if (!restored.ok()) {
          line("cluster: restoring the shards after the fence failed: " +
               restored.status().ToString());
          return;
        }
        line("cluster: back in the cluster: " +
             std::to_string(restored->restored) +
             " shards restored from a "
             "save, " +
             std::to_string(restored->created) + " started from init, " +
             std::to_string(restored->failed) + " failed");
      },
      // Shards of machines that died, won here by rendezvous hashing.
      [this](const std::vector<std::string>& ids) {
        const auto started = std::chrono::steady_clock::now();
        const std::set<std::string, std::less<>> wanted(ids.begin(), ids.end());
        auto line = [this](const std::string& text) {
          guest_log_->PushLine(text);
        };
        Result<RestoreReport> taken = shards_->directory().RestoreAll(
            line, [&wanted](std::string_view id) {
              return wanted.find(id) != wanted.end();
            });
        if (!taken.ok()) {
          line("cluster: taking over the shards of dead machines failed: " +
               taken.status().ToString());
          return;
        }
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - started)
                            .count();
        line("cluster: took over shards of machines that died: " +
             std::to_string(taken->restored) + " restored from a save, " +
             std::to_string(taken->created) + " started from init, " +
             std::to_string(taken->failed) + " failed, " +
             std::to_string(taken->elsewhere) + " taken by another machine (" +
             std::to_string(ms) + " ms)");
      });
}

uint16_t AppServer::port() const { return server_->port(); }

void AppServer::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  watcher_.reset();  // no reload starts from a source change any more
  // Stop ticking and save first, while clients are still connected (the
  // host's shutdown flushes each shard's entity writes); then the writes
  // and calls still queued, then the engine (which the calls run on), then
  // tell the clients to come back.
  if (shards_) shutdown_report_ = shards_->Shutdown();
  // After the saves: the epoch is marked as left only once they are in.
  if (cluster_) cluster_->Shutdown();
  if (writes_) writes_->Stop();
  if (calls_) calls_->Stop();
  if (stop_functions_) stop_functions_->Stop();
  if (compute_) compute_->Shutdown();
  // Commits what the realms have queued, then closes their connections.
  if (realms_) realms_->Shutdown();
  if (server_) server_->Stop(net::kCloseGoingAway, kRestartCloseReason);
  if (notifier_) notifier_->Stop();
  if (data_) data_->Shutdown();
  if (guest_log_) guest_log_->Stop();  // writes what is still queued
}

}  // namespace tessera::server
