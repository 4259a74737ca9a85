// Loads modules through the real loader (validate, instrument, wasm2c,
// compile, dlopen) on a pool of threads, so the modules of a script compile
// in parallel while earlier scripts run.
//
// Threading: Load may be called from any thread; the futures it returns
// are ready once a worker has loaded the file.
#ifndef TESSERA_TESTS_SPEC_MODULE_POOL_H_
#define TESSERA_TESTS_SPEC_MODULE_POOL_H_

#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "wasm/compiled_module.h"
#include "wasm/loader.h"

namespace tessera::spec {

using LoadResult = Result<std::shared_ptr<const wasm::CompiledModule>>;

class ModulePool {
 public:
  ModulePool(wasm::LoadOptions options, int threads);
  // Finishes queued loads, then joins the workers.
  ~ModulePool();
  ModulePool(const ModulePool&) = delete;
  ModulePool& operator=(const ModulePool&) = delete;

  // Queues the module file at `path` (loads run in queue order).
  std::shared_future<LoadResult> Load(const std::string& path);

 private:
  void Work();

  const wasm::LoadOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<LoadResult()>> queue_;  // GUARDED_BY(mu_)
  bool stopping_ = false;                               // GUARDED_BY(mu_)
  std::vector<std::thread> workers_;
};

// Reads and loads one module file on the calling thread.
LoadResult LoadFile(const std::string& path, const wasm::LoadOptions& options);

}  // namespace tessera::spec

#endif  // TESSERA_TESTS_SPEC_MODULE_POOL_H_
