// What both data stores (sqlite_data_store.h, postgres/pg_data_store.h)
// keep their connections with: the writer gate (a write transaction holds
// it from Begin to its end) and a pool of idle reader connections.
// Internal to the stores; header-only.
//
// The gate is a flag, not a mutex, so a transaction may end on another
// thread than the one that began it, and a thread asking again while it
// holds the writer times out instead of deadlocking.
//
// Threading: every method may be called from any thread.
#ifndef TESSERA_STORE_DATA_CONNECTIONS_H_
#define TESSERA_STORE_DATA_CONNECTIONS_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"

namespace tessera::store {

class WriterGate {
 public:
  // Takes the writer within `wait_ms`; kUnavailable "UNAVAILABLE: ..."
  // when it stays busy.
  Status Acquire(int64_t wait_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock,
                      std::chrono::milliseconds(std::max<int64_t>(wait_ms, 0)),
                      [&] { return !busy_; })) {
      return Status(StatusCode::kUnavailable,
                    "UNAVAILABLE: the data store is busy (the writer was not "
                    "free within " +
                        std::to_string(wait_ms) + " ms)");
    }
    busy_ = true;
    return Status::Ok();
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
    }
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool busy_ GUARDED_BY(mu_) = false;
};

// Idle reader connections: Take gives one (opening a new one with `open`
// when none is idle), Return keeps it unless `idle` are kept already.
template <typename Conn>
class ReaderPool {
 public:
  using Opener = std::function<Result<std::unique_ptr<Conn>>()>;
  ReaderPool(Opener open, int idle) : open_(std::move(open)), idle_(idle) {}
  ~ReaderPool() { Clear(); }

  Result<std::unique_ptr<Conn>> Take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!conns_.empty()) {
        std::unique_ptr<Conn> conn = std::move(conns_.back());
        conns_.pop_back();
        return conn;
      }
    }
    return open_();
  }
  void Return(std::unique_ptr<Conn> conn) {
    std::lock_guard<std::mutex> lock(mu_);
    if (conns_.size() < static_cast<size_t>(idle_)) {
      conns_.push_back(std::move(conn));
    }
  }
  // Closes every idle connection.
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    conns_.clear();
  }

 private:
  const Opener open_;
  const int idle_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Conn>> conns_ GUARDED_BY(mu_);
};

}  // namespace tessera::store

#endif  // TESSERA_STORE_DATA_CONNECTIONS_H_
