#include "server/source_watcher.h"

#include <chrono>
#include <system_error>
#include <utility>

#include "common/fnv.h"

namespace tessera::server {

namespace fs = std::filesystem;

uint64_t DirectoryFingerprint(const fs::path& dir) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  if (ec) return 0;
  Fnv1a64 hash;
  for (; it != end; it.increment(ec)) {
    if (ec) return 0;
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || name == "target") {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    hash.Add(fs::relative(it->path(), dir, ec).string());
    hash.AddU64(static_cast<uint64_t>(it->file_size(ec)));
    hash.AddU64(static_cast<uint64_t>(
        it->last_write_time(ec).time_since_epoch().count()));
  }
  return hash.value();
}

SourceWatcher::SourceWatcher(std::map<std::string, fs::path> dirs,
                             std::function<void(const std::string&)> changed,
                             int64_t poll_ms)
    : dirs_(std::move(dirs)),
      changed_(std::move(changed)),
      poll_ms_(poll_ms),
      thread_([this] { Loop(); }) {}

SourceWatcher::~SourceWatcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void SourceWatcher::Loop() {
  std::map<std::string, uint64_t> seen;     // the last fingerprint acted on
  std::map<std::string, uint64_t> pending;  // changed, waiting to settle
  for (const auto& [kind, dir] : dirs_) seen[kind] = DirectoryFingerprint(dir);
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait_for(lock, std::chrono::milliseconds(poll_ms_),
                     [&] { return stopping_; });
      if (stopping_) return;
    }
    for (const auto& [kind, dir] : dirs_) {
      const uint64_t now = DirectoryFingerprint(dir);
      auto waiting = pending.find(kind);
      if (waiting != pending.end()) {
        if (waiting->second == now) {
          pending.erase(waiting);
          seen[kind] = now;
          changed_(kind);
        } else {
          waiting->second = now;  // still changing
        }
      } else if (now != seen[kind]) {
        pending[kind] = now;
      }
    }
  }
}

}  // namespace tessera::server
