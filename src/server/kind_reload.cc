#include "server/kind_reload.h"

#include <chrono>
#include <memory>
#include <sstream>
#include <utility>

#include "app/builder.h"
#include "server/app_kinds.h"
#include "server/bearer_auth.h"
#include "server/http_json.h"
#include "server/request_target.h"

namespace tessera::server {

using json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

namespace {

std::map<std::string, KindSource> ByName(std::vector<KindSource> kinds) {
  std::map<std::string, KindSource> out;
  for (KindSource& k : kinds) {
    std::string name = k.spec.config.name;
    out.emplace(std::move(name), std::move(k));
  }
  return out;
}

bool Finished(const std::string& state) {
  return state == "done" || state == "failed";
}

}  // namespace

KindReloads::KindReloads(std::vector<KindSource> kinds,
                         shard::KindRegistry* registry, shard::ShardHost* host,
                         KindReloadsOptions options)
    : kinds_(ByName(std::move(kinds))),
      registry_(registry),
      host_(host),
      options_(std::move(options)),
      wall_clock_(options_.wall_clock != nullptr ? *options_.wall_clock
                                                 : *RealWallClock::Get()),
      thread_([this] { Loop(); }) {}

KindReloads::~KindReloads() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

Result<uint64_t> KindReloads::Request(const std::string& kind) {
  if (kinds_.count(kind) == 0) {
    return NotFound("unknown shard kind \"" + kind + "\"");
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [queued, id] : queue_) {
    if (queued == kind) return id;
  }
  const uint64_t id = next_id_++;
  Report& report = latest_[kind];
  report = Report{};
  report.id = id;
  report.state = "queued";
  report.requested_unix_ms = wall_clock_.UnixNowMs();
  queue_.emplace_back(kind, id);
  changed_.notify_all();
  return id;
}

Result<json> KindReloads::Describe(const std::string& kind) const {
  if (kinds_.count(kind) == 0) {
    return NotFound("unknown shard kind \"" + kind + "\"");
  }
  std::lock_guard<std::mutex> lock(mu_);
  return DescribeLocked(kind);
}

json KindReloads::DescribeLocked(const std::string& kind) const {
  std::shared_ptr<const shard::KindEntry> entry = registry_->Find(kind);
  json out = {{"kind", kind},
              {"version", entry != nullptr ? json(entry->version) : json()}};
  auto it = latest_.find(kind);
  if (it == latest_.end()) {
    out["reload"] = nullptr;
    return out;
  }
  const Report& r = it->second;
  json shards = json::array();
  for (const shard::ReloadOutcome& o : r.shards) {
    shards.push_back(
        {{"id", o.shard_id},
         {"reloaded", o.reloaded},
         {"message", o.message.empty() ? json() : json(o.message)}});
  }
  out["reload"] = {
      {"id", r.id},
      {"state", r.state},
      {"error", r.error.empty() ? json() : json(r.error)},
      {"version", r.version.empty() ? json() : json(r.version)},
      {"shards", shards},
      {"requestedUnixMs", r.requested_unix_ms},
      {"finishedUnixMs",
       r.finished_unix_ms == 0 ? json() : json(r.finished_unix_ms)}};
  return out;
}

Result<json> KindReloads::Wait(const std::string& kind, uint64_t id,
                               int64_t timeout_ms) {
  if (kinds_.count(kind) == 0) {
    return NotFound("unknown shard kind \"" + kind + "\"");
  }
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    auto it = latest_.find(kind);
    return it == latest_.end() || it->second.id != id ||
           Finished(it->second.state);
  });
  return DescribeLocked(kind);
}

std::map<std::string, std::filesystem::path> KindReloads::WatchedDirs() const {
  std::map<std::string, std::filesystem::path> out;
  for (const auto& [name, k] : kinds_) {
    if (k.spec.is_source()) out[name] = k.spec.source;
    if (k.spec.is_crate()) out[name] = k.spec.crate_dir;
  }
  return out;
}

void KindReloads::Loop() {
  for (;;) {
    std::pair<std::string, uint64_t> next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      next = queue_.front();
      queue_.pop_front();
    }
    Run(next.first, next.second);
  }
}

void KindReloads::Run(const std::string& kind, uint64_t id) {
  const KindSource& source = kinds_.at(kind);
  std::ostringstream progress;
  if (options_.build && source.spec.is_built()) {
    SetState(kind, id, "building");
    app::BuildOptions build;
    build.only_kinds = {kind};
    if (Status built = app::BuildKinds(source.app, build, progress);
        !built.ok()) {
      Finish(kind, id, built.message(), "", {});
      return;
    }
  }
  SetState(kind, id, "loading");
  Result<LoadedKind> loaded =
      LoadKindModule(source.app, source.spec, source.cache_dir, progress);
  if (!loaded.ok()) {
    Finish(kind, id, loaded.status().message(), "", {});
    return;
  }
  std::shared_ptr<const shard::KindEntry> current = registry_->Find(kind);
  std::shared_ptr<const shard::KindEntry> entry = current;
  if (current == nullptr || current->version != loaded->version) {
    Result<std::shared_ptr<const shard::KindEntry>> replaced =
        registry_->Replace(kind, loaded->module, loaded->version);
    if (!replaced.ok()) {
      Finish(kind, id, replaced.status().message(), "", {});
      return;
    }
    entry = *replaced;
  }
  SetState(kind, id, "swapping");
  // Shards already on this build answer at once (their version matches).
  auto answered =
      std::make_shared<std::pair<std::mutex, std::condition_variable>>();
  auto outcomes =
      std::make_shared<std::optional<std::vector<shard::ReloadOutcome>>>();
  host_->Reload(kind, entry,
                [answered, outcomes](std::vector<shard::ReloadOutcome> got) {
                  {
                    std::lock_guard<std::mutex> lock(answered->first);
                    *outcomes = std::move(got);
                  }
                  answered->second.notify_all();
                });
  std::vector<shard::ReloadOutcome> shards;
  {
    std::unique_lock<std::mutex> lock(answered->first);
    answered->second.wait_for(lock,
                              std::chrono::milliseconds(options_.shard_wait_ms),
                              [&] { return outcomes->has_value(); });
    if (outcomes->has_value()) {
      shards = std::move(**outcomes);
    } else {
      Finish(kind, id,
             "the shards did not all answer within " +
                 std::to_string(options_.shard_wait_ms) + " ms",
             loaded->version, {});
      return;
    }
  }
  Finish(kind, id, "", loaded->version, std::move(shards));
}

void KindReloads::SetState(const std::string& kind, uint64_t id,
                           std::string state) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Report& r = latest_[kind];
    if (r.id != id) return;
    r.state = std::move(state);
  }
  changed_.notify_all();
}

void KindReloads::Finish(const std::string& kind, uint64_t id,
                         std::string error, std::string version,
                         std::vector<shard::ReloadOutcome> shards) {
  const int64_t now_ms = wall_clock_.UnixNowMs();
  std::string took;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = latest_.find(kind);
    if (it != latest_.end() && it->second.id == id) {
      took = " in " + std::to_string(now_ms - it->second.requested_unix_ms) +
             " ms";
    }
  }
  if (!error.empty()) {
    Log("reload " + kind + " failed" + took +
        "; its shards keep the code they run:\n" + error);
  } else {
    size_t moved = 0;
    std::string kept;
    for (const shard::ReloadOutcome& o : shards) {
      if (o.reloaded) {
        ++moved;
      } else {
        kept += "\n  " + o.shard_id + ": " + o.message;
      }
    }
    Log("reload " + kind + ": " + version + ", " + std::to_string(moved) +
        " of " + std::to_string(shards.size()) + " running shards moved" +
        took + kept);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    Report& r = latest_[kind];
    if (r.id == id) {
      r.state = error.empty() ? "done" : "failed";
      r.error = std::move(error);
      r.version = std::move(version);
      r.shards = std::move(shards);
      r.finished_unix_ms = now_ms;
    }
  }
  changed_.notify_all();
}

void KindReloads::Log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

void KindReloads::RegisterRoutes(net::Router& router) {
  router.AddHttp("/api/kinds", *this);
}

HttpResponse KindReloads::Handle(const HttpRequest& request) {
  std::optional<RequestTarget> target = ParseTarget(request.target);
  if (!target || target->segments.size() < 2 || target->segments.size() > 4 ||
      target->segments[1] != "kinds") {
    return ErrorResponse(404, "not_found", "no route " + request.target);
  }
  const std::vector<std::string>& s = target->segments;
  const bool get = request.method == "GET" || request.method == "HEAD";
  const bool reload = s.size() == 4 && s[3] == "reload";
  if (s.size() == 4 && !reload) {
    return ErrorResponse(404, "not_found", "no route " + request.target);
  }
  if (reload && request.method != "POST") {
    return MethodNotAllowed(request.method, "POST");
  }
  if (!reload && !get) return MethodNotAllowed(request.method, "GET");
  if (!HasBearerToken(request, options_.admin_token)) {
    return AdminTokenRequired();
  }
  if (s.size() == 2) {
    json all = json::array();
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, source] : kinds_)
      all.push_back(DescribeLocked(name));
    return JsonResponse(200, all);
  }
  if (reload) {
    Result<uint64_t> id = Request(s[2]);
    if (!id.ok()) return ErrorFromStatus(id.status());
  }
  Result<json> described = Describe(s[2]);
  if (!described.ok()) return ErrorFromStatus(described.status());
  return JsonResponse(reload ? 202 : 200, *described);
}

}  // namespace tessera::server
