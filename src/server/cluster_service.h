// ClusterService: this process as one machine of a cluster on one
// PostgreSQL database (docs/cluster.md). Built by the app server when its
// database URL is postgres://; SQLite stays a single machine without it.
//
//  - At boot (JoinAtBoot) the machine joins under its id with a fresh
//    epoch, waiting while a live process still holds the id (at most the
//    dead time, 10 s, and a heartbeat more), before any shard starts.
//  - Start runs cluster::Membership's heartbeat (2 s, database clock) and
//    fence (100 ms, no I/O) threads. A fence calls `on_fenced` on the fence
//    thread (the app server fences the shard host: every shard stops
//    unsaved); a join under a new epoch after it calls `on_rejoined` on a
//    thread of this service (the app server unfences the host and restores
//    the directory's shards), so the heartbeat thread never waits on it.
//  - GET /api/machines (admin token): every machine the database knows,
//    live or not, by the database's clock, and which one answers.
//  - Metrics: tessera_cluster_member (1 while this machine may run its
//    shards), tessera_cluster_fences_total, tessera_cluster_joins_total,
//    tessera_cluster_heartbeat_failures_total (all read from the
//    membership at each scrape, RefreshMetrics), and
//    tessera_cluster_takeovers_total.
//  - Shutdown stops both threads and marks the epoch as left, so other
//    machines need not wait the dead time.
//
// Threading: Open, JoinAtBoot, Start and Shutdown from the controlling
// thread; Handle on the io threads.
#ifndef TESSERA_SERVER_CLUSTER_SERVICE_H_
#define TESSERA_SERVER_CLUSTER_SERVICE_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cluster/machine_store.h"
#include "cluster/membership.h"
#include "common/metrics.h"
#include "common/status.h"
#include "net/http_types.h"
#include "server/service.h"
#include "server/shard_directory.h"

namespace tessera::server {

struct ClusterOptions {
  std::string database_url;  // postgres:// or postgresql://
  cluster::MachineInfo self;
  std::string admin_token;
  int64_t heartbeat_every_ms = 2'000;
  int64_t fence_after_ms = 5'000;
  int64_t dead_after_ms = 10'000;
};

class ClusterService final : public Service,
                             public net::HttpHandler,
                             public ShardPlacement {
 public:
  // Opens the machines table (creating it if missing). Errors: the
  // store's (kIo for an unreachable database). `log` gets the membership's
  // lines; `metrics` must outlive the service.
  static Result<std::unique_ptr<ClusterService>> Open(
      ClusterOptions options, Metrics* metrics,
      std::function<void(const std::string&)> log);
  // Shutdown().
  ~ClusterService() override;
  ClusterService(const ClusterService&) = delete;
  ClusterService& operator=(const ClusterService&) = delete;

  // See the file comment. Errors: kUnavailable when it could not join (the
  // id still held, or the database not answering), with the last reason.
  Status JoinAtBoot();
  // `on_orphans` gets, every heartbeat period on this service's thread, the
  // shards placed on machines that are no longer live whose rendezvous
  // owner (rendezvous.h) among the live machines is this one: the app
  // server restores them here (ShardDirectory::RestoreAll, whose Claim
  // takes each placement over unless another machine was first).
  void Start(std::function<void(std::string_view why)> on_fenced,
             std::function<void()> on_rejoined,
             std::function<void(const std::vector<std::string>&)> on_orphans);
  void Shutdown();

  bool may_run() const { return membership_->may_run(); }
  // The epoch the stores' guarded writes carry (store::Store::GuardSaves).
  const cluster::EpochSource& epoch_source() const { return *membership_; }
  int64_t dead_after_ms() const { return options_.dead_after_ms; }
  cluster::Membership::View view() const { return membership_->view(); }
  void RefreshMetrics();

  // ShardPlacement: shards placed on this machine under its current epoch.
  Status Claim(std::string_view id) override;
  Status Release(std::string_view id) override;

  void RegisterRoutes(net::Router& router) override;
  net::HttpResponse Handle(const net::HttpRequest& request) override;

 private:
  ClusterService(ClusterOptions options, Metrics* metrics,
                 std::unique_ptr<cluster::MachineStore> store,
                 std::function<void(const std::string&)> log);
  void WorkLoop();
  // The orphans this machine wins (see Start); empty on any error.
  std::vector<std::string> OrphansToTake();

  const ClusterOptions options_;
  std::unique_ptr<cluster::MachineStore> store_;
  std::unique_ptr<cluster::Membership> membership_;
  std::function<void(std::string_view)> on_fenced_;
  std::function<void()> on_rejoined_;
  std::function<void(const std::vector<std::string>&)> on_orphans_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool rejoin_pending_ = false;  // guarded by mu_
  bool stopping_ = false;        // guarded by mu_
  bool booted_ = false;          // guarded by mu_: the first join is done
  std::thread work_thread_;

  Gauge* member_ = nullptr;
  Counter* fences_ = nullptr;
  Counter* joins_ = nullptr;
  Counter* heartbeat_failures_ = nullptr;
  Counter* takeovers_ = nullptr;
  uint64_t reported_fences_ = 0, reported_joins_ = 0, reported_failures_ = 0;
  std::mutex metrics_mu_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_CLUSTER_SERVICE_H_
