#include "server/cluster_service.h"

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "cluster/rendezvous.h"
#include "server/bearer_auth.h"
#include "server/http_json.h"
#include "server/request_target.h"
#include "store/store.h"

namespace tessera::server {

using json = nlohmann::json;

Result<std::unique_ptr<ClusterService>> ClusterService::Open(
    ClusterOptions options, Metrics* metrics,
    std::function<void(const std::string&)> log) {
  if (options.self.id.empty()) options.self.id = cluster::DefaultMachineId();
  Result<std::unique_ptr<cluster::MachineStore>> store =
      store::OpenMachineStore(options.database_url, options.dead_after_ms);
  if (!store.ok()) return store.status();
  return std::unique_ptr<ClusterService>(new ClusterService(
      std::move(options), metrics, std::move(store).value(), std::move(log)));
}

ClusterService::ClusterService(ClusterOptions options, Metrics* metrics,
                               std::unique_ptr<cluster::MachineStore> store,
                               std::function<void(const std::string&)> log)
    : options_(std::move(options)), store_(std::move(store)) {
  cluster::MembershipOptions m;
  m.self = options_.self;
  m.heartbeat_every_us = options_.heartbeat_every_ms * 1000;
  m.fence_after_us = options_.fence_after_ms * 1000;
  m.log = [log = std::move(log)](std::string_view line) {
    if (log) log(std::string(line));
  };
  m.on_fenced = [this](std::string_view why) {
    if (on_fenced_) on_fenced_(why);
  };
  m.on_joined = [this](uint64_t) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!booted_) return;  // the boot's own join: the server restores
    rejoin_pending_ = true;
    wake_.notify_all();
  };
  member_ = metrics->GetGauge(
      "tessera_cluster_member",
      "1 while this machine holds its epoch and may run its shards.");
  fences_ = metrics->GetCounter(
      "tessera_cluster_fences_total",
      "Times this machine fenced itself (no heartbeat landed in time, or "
      "its epoch lapsed).");
  joins_ = metrics->GetCounter("tessera_cluster_joins_total",
                               "Joins of this machine, each with a new epoch.");
  heartbeat_failures_ =
      metrics->GetCounter("tessera_cluster_heartbeat_failures_total",
                          "Heartbeats that failed or got no answer in time.");
  takeovers_ = metrics->GetCounter(
      "tessera_cluster_takeovers_total",
      "Shards of dead machines this machine set out to take over.");
  membership_ = std::make_unique<cluster::Membership>(store_.get(), m);
}

ClusterService::~ClusterService() { Shutdown(); }

Status ClusterService::JoinAtBoot() {
  const Clock* clock = RealClock::Get();
  const int64_t give_up_us =
      clock->NowUs() +
      (options_.dead_after_ms + 2 * options_.heartbeat_every_ms) * 1000;
  while (true) {
    const int64_t next = membership_->Step(clock->NowUs());
    if (membership_->may_run()) break;
    if (clock->NowUs() >= give_up_us) {
      cluster::Membership::View view = membership_->view();
      return Status(StatusCode::kUnavailable,
                    "machine " + options_.self.id +
                        " could not join the cluster: " +
                        (view.last_error.empty()
                             ? "its id is still held by a live process"
                             : view.last_error));
    }
    std::this_thread::sleep_for(
        std::chrono::microseconds(std::max<int64_t>(0, next - clock->NowUs())));
  }
  std::lock_guard<std::mutex> lock(mu_);
  booted_ = true;
  return Status::Ok();
}

void ClusterService::Start(
    std::function<void(std::string_view)> on_fenced,
    std::function<void()> on_rejoined,
    std::function<void(const std::vector<std::string>&)> on_orphans) {
  on_fenced_ = std::move(on_fenced);
  on_rejoined_ = std::move(on_rejoined);
  on_orphans_ = std::move(on_orphans);
  work_thread_ = std::thread([this] { WorkLoop(); });
  membership_->Start();
}

void ClusterService::WorkLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::milliseconds(options_.heartbeat_every_ms),
                   [this] { return stopping_ || rejoin_pending_; });
    if (stopping_) return;
    const bool rejoined = rejoin_pending_;
    rejoin_pending_ = false;
    lock.unlock();
    // Fenced again meanwhile: the next join brings it back.
    if (rejoined && membership_->may_run() && on_rejoined_) on_rejoined_();
    if (membership_->may_run() && on_orphans_) {
      std::vector<std::string> orphans = OrphansToTake();
      if (!orphans.empty()) {
        takeovers_->Add(orphans.size());
        on_orphans_(orphans);
      }
    }
    lock.lock();
  }
}

std::vector<std::string> ClusterService::OrphansToTake() {
  // Only the orphans leave the database: the scan every 2 s costs nothing
  // while every placed machine is alive.
  Result<std::vector<cluster::Placement>> orphans =
      store_->ListOrphanedPlacements();
  if (!orphans.ok() || orphans->empty()) return {};
  Result<std::vector<cluster::MachineRecord>> machines = store_->List();
  if (!machines.ok()) return {};
  std::vector<std::string> live;
  for (const cluster::MachineRecord& m : *machines) {
    if (m.live) live.push_back(m.info.id);
  }
  std::vector<std::string> mine;
  for (const cluster::Placement& p : *orphans) {
    if (cluster::RendezvousOwner(p.shard_id, live) == options_.self.id) {
      mine.push_back(p.shard_id);
    }
  }
  return mine;
}

Status ClusterService::Claim(std::string_view id) {
  const uint64_t epoch = membership_->current_epoch();
  if (epoch == 0) {
    return Status(StatusCode::kUnavailable,
                  "machine " + options_.self.id +
                      " is fenced (it lost the database): it takes no shard "
                      "until it joins again");
  }
  Result<cluster::Placement> placed =
      store_->Place(id, options_.self.id, epoch);
  if (!placed.ok()) return placed.status();
  if (placed->machine_id == options_.self.id && placed->epoch == epoch) {
    return Status::Ok();
  }
  if (placed->machine_id.empty() || placed->machine_id == options_.self.id) {
    return Status(StatusCode::kUnavailable,
                  "machine " + options_.self.id + "'s epoch " +
                      std::to_string(epoch) + " has lapsed");
  }
  return Status(StatusCode::kAlreadyExists, "shard \"" + std::string(id) +
                                                "\" runs on machine " +
                                                placed->machine_id);
}

Status ClusterService::Release(std::string_view id) {
  const uint64_t epoch = membership_->current_epoch();
  if (epoch == 0) return Status::Ok();  // fenced: the placement stays
  return store_->Unplace(id, options_.self.id, epoch);
}

void ClusterService::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (work_thread_.joinable()) work_thread_.join();
  membership_->Stop(/*leave=*/true);
}

void ClusterService::RefreshMetrics() {
  const cluster::Membership::View view = membership_->view();
  member_->Set(membership_->may_run() ? 1 : 0);
  std::lock_guard<std::mutex> lock(metrics_mu_);
  fences_->Add(view.fences - reported_fences_);
  joins_->Add(view.joins - reported_joins_);
  heartbeat_failures_->Add(view.heartbeat_failures - reported_failures_);
  reported_fences_ = view.fences;
  reported_joins_ = view.joins;
  reported_failures_ = view.heartbeat_failures;
}

void ClusterService::RegisterRoutes(net::Router& router) {
  router.AddHttp("/api/machines", *this);
}

net::HttpResponse ClusterService::Handle(const net::HttpRequest& request) {
  const std::optional<RequestTarget> target = ParseTarget(request.target);
  if (!target || target->segments.size() != 2) {
    return ErrorResponse(404, "not_found", "no route " + request.target);
  }
  if (request.method != "GET" && request.method != "HEAD") {
    return MethodNotAllowed(request.method, "GET");
  }
  if (!HasBearerToken(request, options_.admin_token)) {
    return AdminTokenRequired();
  }
  Result<std::vector<cluster::MachineRecord>> machines = store_->List();
  if (!machines.ok()) return ErrorFromStatus(machines.status());
  Result<std::vector<cluster::Placement>> placements = store_->ListPlacements();
  if (!placements.ok()) return ErrorFromStatus(placements.status());
  std::map<std::string, int64_t, std::less<>> shards;
  for (const cluster::Placement& p : *placements) ++shards[p.machine_id];
  const cluster::Membership::View self = membership_->view();
  json list = json::array();
  for (const cluster::MachineRecord& m : *machines) {
    list.push_back({{"id", m.info.id},
                    {"address", m.info.address},
                    {"capacity", m.info.capacity},
                    {"epoch", std::to_string(m.epoch)},
                    {"live", m.live},
                    {"shards", shards[m.info.id]},
                    {"silentMs", m.silent_ms},
                    {"startedUnixMs", m.started_unix_ms},
                    {"heartbeatUnixMs", m.heartbeat_unix_ms},
                    {"leftUnixMs", m.left_unix_ms == 0 ? json(nullptr)
                                                       : json(m.left_unix_ms)},
                    {"self", m.info.id == self.id}});
  }
  return JsonResponse(200, {{"self",
                             {{"id", self.id},
                              {"epoch", std::to_string(self.epoch)},
                              {"member", self.member},
                              {"fenced", self.fenced},
                              {"joins", self.joins},
                              {"fences", self.fences},
                              {"lastError", self.last_error}}},
                            {"machines", std::move(list)}});
}

}  // namespace tessera::server
