// CompileQueue (source_compiler.h). One worker thread; `mu` guards the
// queue and the flags. The store and the compiler are called outside the
// lock, so Enqueue and pending() never wait for a compile.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "compute/source_compiler.h"

namespace tessera::compute {

struct CompileQueue::Impl {
  using Key = std::pair<int64_t, int64_t>;  // (module_id, version_no)

  ComputeStore* store;
  SourceCompiler* compiler;
  Done done;
  const WallClock* wall;

  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<Key> queue;   // guarded by mu
  std::set<Key> queued;    // guarded by mu: what `queue` holds
  bool compiling = false;  // guarded by mu
  bool running = false;    // guarded by mu: the worker is up
  bool stopping = false;   // guarded by mu
  std::thread worker;

  void Push(Key key) {  // requires mu
    if (queued.insert(key).second) queue.push_back(key);
  }
  void Loop();
  // The finished version, or nullopt when there was nothing to do.
  std::optional<VersionRecord> Process(int64_t module_id, int64_t version_no);
  // From an earlier succeeded version of the same source whose module file
  // still exists; false when there is none.
  bool FromCache(VersionRecord* version);
};

void CompileQueue::Impl::Loop() {
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    cv.wait(lock, [&] { return stopping || !queue.empty(); });
    if (stopping) return;
    const Key key = queue.front();
    queue.pop_front();
    queued.erase(key);
    compiling = true;
    lock.unlock();
    std::optional<VersionRecord> finished = Process(key.first, key.second);
    lock.lock();
    compiling = false;  // before Done: pending() no longer counts it
    if (finished.has_value() && done) {
      lock.unlock();
      done(*finished);
      lock.lock();
    }
  }
}

bool CompileQueue::Impl::FromCache(VersionRecord* version) {
  if (version->source_hash.empty()) return false;
  Result<std::optional<VersionRecord>> found =
      store->FindCompiled(version->source_hash);
  if (!found.ok() || !found->has_value()) return false;
  const VersionRecord& earlier = **found;
  if (earlier.status != CompileStatus::kSucceeded ||
      earlier.language != version->language || earlier.artifact_path.empty()) {
    return false;
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(earlier.artifact_path, ec)) {
    return false;
  }
  version->status = CompileStatus::kSucceeded;
  version->compile_log = earlier.compile_log;
  version->compiled_size_bytes = earlier.compiled_size_bytes;
  version->artifact_path = earlier.artifact_path;
  version->cache_hit = true;
  return true;
}

std::optional<VersionRecord> CompileQueue::Impl::Process(int64_t module_id,
                                                         int64_t version_no) {
  Result<VersionRecord> got = store->GetVersion(module_id, version_no);
  // Gone (its module was deleted) or unreadable: nothing to do now; an
  // unfinished version resumes at the next Start.
  if (!got.ok()) return std::nullopt;
  VersionRecord version = std::move(*got);
  if (version.status == CompileStatus::kSucceeded ||
      version.status == CompileStatus::kFailed) {
    return std::nullopt;
  }
  if (!FromCache(&version)) {
    version.status = CompileStatus::kCompiling;
    version.cache_hit = false;
    if (!store->UpdateVersionCompile(version).ok()) return std::nullopt;
    CompileResult result = compiler->Compile(version);
    version.status =
        result.ok ? CompileStatus::kSucceeded : CompileStatus::kFailed;
    version.compile_log = std::move(result.log);
    version.compiled_size_bytes = result.ok ? result.size_bytes : 0;
    version.artifact_path = result.ok ? result.wasm.string() : "";
  }
  version.compiled_ms = wall->UnixNowMs();
  if (!store->UpdateVersionCompile(version).ok()) return std::nullopt;
  return version;
}

CompileQueue::CompileQueue(ComputeStore* store, SourceCompiler* compiler,
                           Done done, const WallClock* wall)
    : impl_(std::make_unique<Impl>()) {
  impl_->store = store;
  impl_->compiler = compiler;
  impl_->done = std::move(done);
  impl_->wall = wall != nullptr ? wall : RealWallClock::Get();
}

CompileQueue::~CompileQueue() { Shutdown(); }

Status CompileQueue::Start() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->running) return Status::Ok();
  }
  Result<std::vector<VersionRecord>> unfinished =
      impl_->store->ListUnfinishedVersions();
  if (!unfinished.ok()) return unfinished.status();
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->running) return Status::Ok();
  // Resumed versions first (they are older than anything queued since).
  std::deque<Impl::Key> later;
  later.swap(impl_->queue);
  impl_->queued.clear();
  for (const VersionRecord& v : *unfinished) {
    impl_->Push({v.module_id, v.version_no});
  }
  for (const Impl::Key& key : later) impl_->Push(key);
  impl_->stopping = false;
  impl_->running = true;
  impl_->worker = std::thread([impl = impl_.get()] { impl->Loop(); });
  return Status::Ok();
}

void CompileQueue::Enqueue(int64_t module_id, int64_t version_no) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->stopping) return;  // stays pending; resumes at the next Start
  impl_->Push({module_id, version_no});
  impl_->cv.notify_one();
}

void CompileQueue::Shutdown() {
  std::thread worker;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->running) {
      impl_->queue.clear();
      impl_->queued.clear();
      return;
    }
    impl_->stopping = true;
    impl_->running = false;
    impl_->queue.clear();
    impl_->queued.clear();
    worker = std::move(impl_->worker);
  }
  impl_->cv.notify_all();
  if (worker.joinable()) worker.join();
}

size_t CompileQueue::pending() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->queue.size() + (impl_->compiling ? 1 : 0);
}

}  // namespace tessera::compute
