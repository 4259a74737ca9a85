// Durable storage of the shard directory and saved states. SQLite (WAL) is
// the embedded default; PostgreSQL comes with the cluster issue.
//
// Thread-safety: every method may be called from any thread, concurrently.
#ifndef TESSERA_STORE_STORE_H_
#define TESSERA_STORE_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "shard/state_store.h"

namespace tessera::store {

// One shard of the directory: what it takes to start it again.
struct ShardRecord {
  std::string id;
  std::string kind;
  std::string params;  // bytes in the kind's codec, as created
  std::string status;  // "running", "failed" (refused its state, see error)
  std::string error;   // why it is not running, if it is not
  int64_t created_unix_ms = 0;
  int64_t updated_unix_ms = 0;
};

class Store : public shard::StateStore {
 public:
  // Inserts or replaces the record with this id.
  virtual Status PutShard(const ShardRecord& record) = 0;
  // Updates status and error of an existing record. Errors: kNotFound.
  virtual Status SetShardStatus(std::string_view id, std::string_view status,
                                std::string_view error) = 0;
  // Removes the record and its saved state (a no-op when absent).
  virtual Status DeleteShard(std::string_view id) = 0;
  virtual Result<std::vector<ShardRecord>> ListShards() = 0;
};

// Opens (creating if needed) the store named by `url`:
//   "sqlite:PATH", "sqlite://PATH" or a plain file path -> SQLite in WAL
//   mode with synchronous=NORMAL... FULL for saves (nothing lost on crash).
//   "postgres://..." / "postgresql://..." -> kFailedPrecondition for now.
// Errors: kIo with SQLite's message and the path.
Result<std::unique_ptr<Store>> OpenStore(const std::string& url);

}  // namespace tessera::store

#endif  // TESSERA_STORE_STORE_H_
