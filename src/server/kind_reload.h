// Hot reload of shard kinds (docs/admin-api.md "Kinds and hot reload"):
// a kind's module is built again (`tessera dev`, source kinds), loaded,
// put in the registry, and every running shard of the kind moves to it by
// save -> restore (ShardHost::Reload) with its players connected. A build
// or load that fails changes nothing: the old code keeps running, and the
// compiler's or loader's message is the reload's error.
//
// Reloads run on a thread of their own, one at a time and in the order
// asked (asking again for a kind already waiting does not queue it twice),
// so neither the HTTP route nor the source watcher blocks on a compiler:
//   POST /api/kinds/<kind>/reload   (admin) 202 {kind, reload: {id, state}}
//   GET  /api/kinds                 (admin) [{kind, version, reload}]
//   GET  /api/kinds/<kind>          (admin) {kind, version, reload}
// where `reload` is the kind's latest reload: {id, state: "queued" |
// "building" | "loading" | "swapping" | "optimizing" | "done" | "failed",
// error, version, quick: null | {version, ms}, shards: [{id, reloaded,
// message}], requestedUnixMs, finishedUnixMs}. In dev a C++ kind is swapped
// twice: to a quick build first (`quick`; state "optimizing" while the
// optimised build follows), then to the optimised one (`version`).
//
// Thread-safety: every method may be called from any thread.
#ifndef TESSERA_SERVER_KIND_RELOAD_H_
#define TESSERA_SERVER_KIND_RELOAD_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/manifest.h"
#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "net/http_types.h"
#include "server/app_kinds.h"
#include "server/service.h"
#include "shard/kind_registry.h"
#include "shard/shard_host.h"

namespace tessera::server {

struct KindSource {
  app::Manifest app;  // the manifest of the app the kind belongs to
  app::ShardKindSpec spec;
  std::filesystem::path cache_dir;  // compiled modules (LoadAppKinds')
};

struct KindReloadsOptions {
  bool build = false;  // build source and crate kinds first (dev)
  // With `build`: a C++ kind is built quick first (app/builder.h: -O0
  // against a precompiled SDK, the generated C by Tiny C when installed)
  // and swapped in, then built optimised and swapped again. The report
  // says "optimizing" in between and carries `quick: {version, ms}`.
  bool quick = false;
  std::string admin_token;
  // One line per reload's steps and outcome; any thread.
  std::function<void(const std::string&)> log;
  // How long to wait for the shards' answers before reporting the reload
  // as done with the shards that answered.
  int64_t shard_wait_ms = 30000;
  const WallClock* wall_clock = nullptr;  // null: RealWallClock
};

class KindReloads final : public Service, public net::HttpHandler {
 public:
  // `registry` and `host` are not owned and must outlive this.
  KindReloads(std::vector<KindSource> kinds, shard::KindRegistry* registry,
              shard::ShardHost* host, KindReloadsOptions options);
  // Stops the thread after the reload in progress.
  ~KindReloads() override;
  KindReloads(const KindReloads&) = delete;
  KindReloads& operator=(const KindReloads&) = delete;

  // Queues a reload of `kind`; returns its id (the id of the one already
  // waiting, if any). Errors: kNotFound for an unknown kind.
  Result<uint64_t> Request(const std::string& kind);
  // The kind's latest reload (null before the first), as in the file
  // comment. Errors: kNotFound.
  Result<nlohmann::json> Describe(const std::string& kind) const;
  // Blocks until reload `id` of `kind` is done or failed, or `timeout_ms`
  // passed; returns its description (tests, the dev watcher).
  Result<nlohmann::json> Wait(const std::string& kind, uint64_t id,
                              int64_t timeout_ms);
  // The source directories (and crate directories) of the built kinds,
  // by kind: what the dev watcher watches.
  std::map<std::string, std::filesystem::path> WatchedDirs() const;

  void RegisterRoutes(net::Router& router) override;
  net::HttpResponse Handle(const net::HttpRequest& request) override;

 private:
  struct Report {
    uint64_t id = 0;
    std::string state;
    std::string error;
    std::string version;
    std::vector<shard::ReloadOutcome> shards;
    int64_t requested_unix_ms = 0;
    int64_t finished_unix_ms = 0;
    std::string quick_version;  // set once a quick build runs
    int64_t quick_unix_ms = 0;
  };
  void Loop();
  void Run(const std::string& kind, uint64_t id);
  struct Swapped {
    std::string error;    // empty when loaded and swapped
    std::string version;  // of the module loaded
    std::vector<shard::ReloadOutcome> shards;
  };
  // Loads the kind's module (as `choice` says), puts it in the registry
  // and moves the running shards to it.
  Swapped LoadAndSwap(const std::string& kind, uint64_t id,
                      const KindSource& source, const KindModuleChoice& choice,
                      std::ostream& progress);
  static bool OptimisedIsCurrent(const KindSource& source);
  // Whether a reload of `kind` waits in the queue.
  bool Queued(const std::string& kind) const;
  // The quick step of a dev reload: builds quick and, if that changed
  // anything, swaps the shards to it (`quick`). True when it finished the
  // reload (a failure, or a newer change waiting).
  bool RunQuick(const std::string& kind, uint64_t id, const KindSource& source,
                std::ostream& progress, Swapped* quick);
  // The quick build runs; the optimised one follows.
  void MarkQuick(const std::string& kind, uint64_t id,
                 const std::string& version, const std::string& split);
  void SetState(const std::string& kind, uint64_t id, std::string state);
  void Finish(const std::string& kind, uint64_t id, std::string error,
              std::string version, std::vector<shard::ReloadOutcome> shards);
  nlohmann::json DescribeLocked(const std::string& kind) const
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Log(const std::string& line) const;

  const std::map<std::string, KindSource> kinds_;
  shard::KindRegistry* const registry_;
  shard::ShardHost* const host_;
  const KindReloadsOptions options_;
  const WallClock& wall_clock_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::pair<std::string, uint64_t>> queue_ GUARDED_BY(mu_);
  std::map<std::string, Report> latest_ GUARDED_BY(mu_);
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_KIND_RELOAD_H_
