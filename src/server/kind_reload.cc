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
#include "wasm/loader.h"

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
      {"quick", r.quick_version.empty()
                    ? json()
                    : json({{"version", r.quick_version},
                            {"ms", r.quick_unix_ms - r.requested_unix_ms}})},
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
  const bool build = options_.build && source.spec.is_built();
  Swapped quick;  // the quick build's swap, when one ran
  if (build && options_.quick && source.spec.is_source()) {
    if (RunQuick(kind, id, source, progress, &quick)) return;
  } else if (build) {
    SetState(kind, id, "building");
  }
  if (build) {
    app::BuildOptions full;
    full.only_kinds = {kind};
    if (Status built = app::BuildKinds(source.app, full, progress);
        !built.ok()) {
      if (quick.version.empty()) {
        Finish(kind, id, built.message(), "", {});
      } else {
        Finish(kind, id,
               "the optimised build failed; the shards keep the quick build " +
                   quick.version + ":\n" + built.message(),
               quick.version, std::move(quick.shards));
      }
      return;
    }
  }
  if (quick.version.empty()) SetState(kind, id, "loading");
  Swapped last = LoadAndSwap(kind, id, source, {}, progress);
  Finish(kind, id, std::move(last.error), std::move(last.version),
         std::move(last.shards));
}

bool KindReloads::RunQuick(const std::string& kind, uint64_t id,
                           const KindSource& source, std::ostream& progress,
                           Swapped* quick) {
  // A quick build (-O0 guest, Tiny C native) so the players see the change
  // at once; the optimised one follows (Run).
  SetState(kind, id, "building");
  app::BuildOptions options;
  options.only_kinds = {kind};
  options.quick = true;
  const auto t0 = std::chrono::steady_clock::now();
  if (Status built = app::BuildKinds(source.app, options, progress);
      !built.ok()) {
    Finish(kind, id, built.message(), "", {});
    return true;
  }
  if (OptimisedIsCurrent(source)) return false;  // nothing changed since
  KindModuleChoice choice;
  choice.wasm = app::QuickOutput(source.app, source.spec);
  choice.c_compiler = wasm::QuickCompiler();
  if (choice.c_compiler.empty()) {  // no Tiny C: the system compiler, -O0
    choice.c_compiler = "cc";
    choice.opt_level = "-O0";
  }
  SetState(kind, id, "loading");
  const auto t1 = std::chrono::steady_clock::now();
  Swapped swapped = LoadAndSwap(kind, id, source, choice, progress);
  const auto t2 = std::chrono::steady_clock::now();
  if (!swapped.error.empty()) {
    Finish(kind, id, swapped.error, swapped.version, std::move(swapped.shards));
    return true;
  }
  auto ms = [](auto a, auto b) {
    return std::to_string(
        std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count());
  };
  MarkQuick(kind, id, swapped.version,
            "build " + ms(t0, t1) + " ms, load and swap " + ms(t1, t2) + " ms");
  if (Queued(kind)) {  // edited again: the next reload builds anew
    Log("reload " + kind + ": optimised build skipped, a newer change waits");
    Finish(kind, id, "", swapped.version, std::move(swapped.shards));
    return true;
  }
  *quick = std::move(swapped);
  return false;
}

KindReloads::Swapped KindReloads::LoadAndSwap(const std::string& kind,
                                              uint64_t id,
                                              const KindSource& source,
                                              const KindModuleChoice& choice,
                                              std::ostream& progress) {
  Swapped out;
  Result<LoadedKind> loaded = LoadKindModule(
      source.app, source.spec, source.cache_dir, progress, choice);
  if (!loaded.ok()) {
    out.error = loaded.status().message();
    return out;
  }
  std::shared_ptr<const shard::KindEntry> current = registry_->Find(kind);
  std::shared_ptr<const shard::KindEntry> entry = current;
  if (current == nullptr || current->version != loaded->version) {
    Result<std::shared_ptr<const shard::KindEntry>> replaced =
        registry_->Replace(kind, loaded->module, loaded->version);
    if (!replaced.ok()) {
      out.error = replaced.status().message();
      return out;
    }
    entry = *replaced;
  }
  out.version = loaded->version;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Report& r = latest_[kind];
    if (r.id == id && r.quick_version.empty()) {
      latest_[kind].state = "swapping";
    }
  }
  changed_.notify_all();
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
  std::unique_lock<std::mutex> lock(answered->first);
  answered->second.wait_for(lock,
                            std::chrono::milliseconds(options_.shard_wait_ms),
                            [&] { return outcomes->has_value(); });
  if (outcomes->has_value()) {
    out.shards = std::move(**outcomes);
  } else {
    out.error = "the shards did not all answer within " +
                std::to_string(options_.shard_wait_ms) + " ms";
  }
  return out;
}

// The optimised module is newer than the quick one: the last reload built
// both from the sources as they are, so a quick build would add nothing.
bool KindReloads::OptimisedIsCurrent(const KindSource& source) {
  std::error_code ec;
  const auto quick = std::filesystem::last_write_time(
      app::QuickOutput(source.app, source.spec), ec);
  if (ec) return false;
  const auto full = std::filesystem::last_write_time(source.spec.output, ec);
  return !ec && full >= quick;
}

bool KindReloads::Queued(const std::string& kind) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [queued, id] : queue_) {
    if (queued == kind) return true;
  }
  return false;
}

void KindReloads::MarkQuick(const std::string& kind, uint64_t id,
                            const std::string& version,
                            const std::string& split) {
  const int64_t now_ms = wall_clock_.UnixNowMs();
  int64_t took = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Report& r = latest_[kind];
    if (r.id != id) return;
    r.state = "optimizing";
    r.quick_version = version;
    r.quick_unix_ms = now_ms;
    took = now_ms - r.requested_unix_ms;
  }
  changed_.notify_all();
  Log("reload " + kind + ": quick build " + version + " running in " +
      std::to_string(took) + " ms (" + split + "); building the optimised one");
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
