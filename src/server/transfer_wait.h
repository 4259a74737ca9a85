// TransferWait: the answer to one ShardHost::Transfer, handed from the
// worker that finishes the move to a thread that waits for it (the admin
// API's request, a compute module's shards.transfer). Shared through a
// shared_ptr: an answer that arrives after the waiter gave up is dropped.
#ifndef TESSERA_SERVER_TRANSFER_WAIT_H_
#define TESSERA_SERVER_TRANSFER_WAIT_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>

#include "shard/talk_types.h"

namespace tessera::server {

class TransferWait {
 public:
  void Done(shard::TransferResult result) {
    std::lock_guard<std::mutex> lock(mu_);
    result_ = std::move(result);
    cv_.notify_all();
  }
  // The answer, or nullopt when none came within `timeout_ms`.
  std::optional<shard::TransferResult> Wait(int64_t timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                 [this] { return result_.has_value(); });
    return result_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<shard::TransferResult> result_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_TRANSFER_WAIT_H_
