#include "module_pool.h"

#include <fstream>
#include <iterator>

namespace tessera::spec {

LoadResult LoadFile(const std::string& path, const wasm::LoadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot read " + path);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  return wasm::LoadModule(bytes, options);
}

ModulePool::ModulePool(wasm::LoadOptions options, int threads)
    : options_(std::move(options)) {
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(); });
}

ModulePool::~ModulePool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

std::shared_future<LoadResult> ModulePool::Load(const std::string& path) {
  std::packaged_task<LoadResult()> task(
      [path, this] { return LoadFile(path, options_); });
  std::shared_future<LoadResult> f = task.get_future().share();
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return f;
}

void ModulePool::Work() {
  for (;;) {
    std::packaged_task<LoadResult()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace tessera::spec
