// EntityWriter: the shards' entity writes to the app's data (DATA.md
// "Entity writes", docs/guest-abi.md): the shard::EntityWriteSink of the
// shard host.
//
// Write keeps the latest value per (shard, entity, id, field) in memory
// (no I/O). Each shard's buffer is flushed write_flush_ms after its first
// buffered write, when the shard stops (ShardStopped, synchronously) and at
// Stop. A flush is one write transaction: each row one Update (origin
// "shard:<id>") in its own Savepoint. A row the data refuses
// (ROW_NOT_FOUND, UNKNOWN_TYPE, UNKNOWN_FIELD, BAD_VALUE, UNIQUE_VIOLATION)
// is logged (shard, entity, id, reason) and dropped; on UNAVAILABLE / kIo
// (or a failed commit) the rows stay buffered (values written meanwhile
// win) and the next flush tries again. Committed changes go to
// `on_changes` (the engine's OnDataChanges). Fault point
// entity_writer_after_commit (after the commit, before on_changes).
//
// Metrics: tessera_entity_writes_total{outcome="written"|"refused"} (rows).
//
// Time: due times come from `clock`; without Start (tests) FlushDue flushes
// the due shards on the calling thread.
//
// Threading: Write and ShardStopped from any thread (the shard workers);
// flushes are serialised (one at a time). Start/Stop from the controlling
// thread. Ownership: the store is not owned and must outlive the writer.
#ifndef TESSERA_SERVER_ENTITY_WRITER_H_
#define TESSERA_SERVER_ENTITY_WRITER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "data/data_store.h"
#include "shard/shard_calls.h"

namespace tessera::server {

struct EntityWriterOptions {
  const Clock* clock = nullptr;  // null: RealClock
  Metrics* metrics = nullptr;    // null: not counted
  // One line per refused row or failed flush; any thread, must not block.
  std::function<void(const std::string&)> log;
  int64_t writer_wait_ms = 2000;
  // When a flush failed for a transient reason, the next try is at most
  // this far away.
  int64_t retry_ms = 1000;
};

class EntityWriter final : public shard::EntityWriteSink {
 public:
  using OnChanges = std::function<void(const std::vector<data::ChangeEvent>&)>;

  EntityWriter(data::DataStore* store, EntityWriterOptions options);
  // Stop().
  ~EntityWriter() override;
  EntityWriter(const EntityWriter&) = delete;
  EntityWriter& operator=(const EntityWriter&) = delete;

  // Before Start (the engine is built after the shard host).
  void set_on_changes(OnChanges on_changes);

  void Write(std::string_view shard_id, uint32_t flush_ms,
             std::vector<shard::EntityWrite> writes) override;
  void ShardStopped(std::string_view shard_id) override;

  // The flush thread.
  void Start();
  // Stops the thread, then flushes every buffer once (what still fails is
  // logged as lost). Idempotent.
  void Stop();

  // Flushes every shard whose buffer is due at the clock's now, on the
  // calling thread; returns how many shards it flushed.
  size_t FlushDue();
  // Flushes shard `id`'s buffer now. Errors: the transient failure that
  // kept the rows (they stay buffered).
  Status Flush(std::string_view shard_id);

  // Rows buffered (all shards).
  size_t buffered_rows() const;
  struct Counts {
    uint64_t written = 0, refused = 0, flushes = 0, failed_flushes = 0;
  };
  Counts counts() const;

 private:
  using RowKey = std::pair<std::string, std::string>;  // entity, id
  struct Buffer {
    uint32_t flush_ms = 2000;
    int64_t due_us = 0;                     // 0: nothing buffered
    std::map<RowKey, nlohmann::json> rows;  // fields -> latest value
  };

  // Writes `rows` of `shard_id`; the rows to keep (transient failure) are
  // merged back. Under flush_mu_.
  Status FlushRows(const std::string& shard_id,
                   std::map<RowKey, nlohmann::json> rows);
  void MergeBack(const std::string& shard_id,
                 std::map<RowKey, nlohmann::json> rows);
  void Log(const std::string& line) const;
  void Loop();

  data::DataStore* const store_;
  const EntityWriterOptions options_;
  const Clock* const clock_;
  Counter* metric_written_ = nullptr;
  Counter* metric_refused_ = nullptr;
  OnChanges on_changes_;

  std::mutex flush_mu_;  // one flush at a time; before mu_
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Buffer, std::less<>> buffers_ GUARDED_BY(mu_);
  Counts counts_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_ENTITY_WRITER_H_
