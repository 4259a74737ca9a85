// Where shards' saved state lives (the bytes a module's tessera_save
// returned), keyed by shard id. The SQLite / PostgreSQL stores come later
// (src/store/); MemoryStateStore serves tests and the in-memory mode.
//
// Thread-safety: implementations must allow calls from any thread,
// concurrently (workers save in parallel).
#ifndef TESSERA_SHARD_STATE_STORE_H_
#define TESSERA_SHARD_STATE_STORE_H_

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/thread_annotations.h"

namespace tessera::shard {

class StateStore {
 public:
  virtual ~StateStore() = default;
  // Replaces the state of `shard_id`. Errors: kIo.
  virtual Status Save(std::string_view shard_id, std::string_view bytes) = 0;
  // The last saved state, or nullopt if none. Errors: kIo.
  virtual Result<std::optional<std::string>> Load(
      std::string_view shard_id) = 0;
  // Drops the state (a no-op when there is none). Errors: kIo.
  virtual Status Forget(std::string_view shard_id) = 0;
};

class MemoryStateStore final : public StateStore {
 public:
  Status Save(std::string_view shard_id, std::string_view bytes) override;
  Result<std::optional<std::string>> Load(std::string_view shard_id) override;
  Status Forget(std::string_view shard_id) override;
  // Number of Save calls so far (for tests).
  size_t saves() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string, std::less<>> states_ GUARDED_BY(mu_);
  size_t saves_ GUARDED_BY(mu_) = 0;
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_STATE_STORE_H_
