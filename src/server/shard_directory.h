// ShardDirectory: the durable list of shards (store::Store) kept in step
// with the live ShardHost. Every shard an operator or a dev join creates is
// recorded; a shard that stops for any reason is forgotten ("stopping it
// forgets it"); at start-up every recorded shard starts again, from its
// save when it has one. A shard whose module refuses its saved state keeps
// the state and stays recorded as "failed" with the module's text until an
// operator stops it.
//
// Ordering: a record is only deleted for a stop when the host does not run
// a newer shard of the same id, checked and done under mu_, and creation
// records under mu_ after the host started the shard, so a stop racing a
// re-create never deletes the new record.
//
// Thread-safety: every method may be called from any thread (API threads,
// shard workers via OnStopped, the start-up thread). Ownership: `host`,
// `kinds` and `store` are not owned and must outlive the directory; `store`
// may be null (nothing is persisted).
#ifndef TESSERA_SERVER_SHARD_DIRECTORY_H_
#define TESSERA_SERVER_SHARD_DIRECTORY_H_

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "shard/kind_registry.h"
#include "shard/shard_host.h"
#include "store/store.h"

namespace tessera::server {

inline constexpr char kRecordRunning[] = "running";
inline constexpr char kRecordFailed[] = "failed";

// Where shards run when several machines share the store (the cluster,
// docs/cluster.md). Without one, every recorded shard is this machine's.
class ShardPlacement {
 public:
  virtual ~ShardPlacement() = default;
  // Places `id` on this machine when it is free (unplaced, placed here, or
  // on a machine that is no longer live). Errors: kAlreadyExists naming
  // the live machine that runs it; kUnavailable while this machine holds
  // no epoch (fenced); the store's.
  virtual Status Claim(std::string_view id) = 0;
  // The shard is gone for good from here: its placement goes too.
  virtual Status Release(std::string_view id) = 0;
};

struct DirectoryOptions {
  // Most shards starting or running at once; Create beyond it fails with
  // kResourceExhausted. 0 = unlimited.
  size_t capacity = 100;
  // Unix time of the records' created/updated timestamps; null:
  // RealWallClock. Not owned; must outlive the directory.
  const WallClock* wall_clock = nullptr;
  // Store errors that no caller can be told about (a stopped shard's record
  // could not be deleted). Null: stderr. Any thread.
  std::function<void(const std::string&)> log;
  // "shard <id> (<kind>) started" for every Create that starts one (tessera
  // dev prints them). Null: none. Any thread.
  std::function<void(const std::string&)> lifecycle_log;
  // Null: a single machine. Not owned; must outlive the directory.
  ShardPlacement* placement = nullptr;
};

struct RestoreReport {
  size_t restored = 0;   // from a save
  size_t created = 0;    // from init with the recorded params
  size_t failed = 0;     // recorded as failed (see FailedRecords)
  size_t elsewhere = 0;  // running on another live machine of the cluster
};

class ShardDirectory {
 public:
  ShardDirectory(shard::ShardHost* host, const shard::KindRegistry* kinds,
                 store::Store* store, DirectoryOptions options = {});

  shard::ShardHost* host() const { return host_; }
  const shard::KindRegistry* kinds() const { return kinds_; }

  // Starts a shard and records it. Errors: kResourceExhausted at capacity,
  // kAlreadyExists if the host runs it or a failed record holds the id, the
  // host's Create errors, kIo if the record cannot be written (the shard is
  // then stopped again).
  Status Create(std::string_view kind, std::string_view id,
                std::string_view params);

  // Asks the host to stop the shard and forgets its record (and saved
  // state). A failed record is forgotten even though nothing runs. A store
  // error is logged, not returned (the shard stops regardless).
  // Errors: kNotFound when neither the host nor the directory knows the id;
  // kFailedPrecondition when the host already stopped it and nothing is
  // recorded.
  Status Stop(std::string_view id);

  // For the ShardSink: the host stopped shard `id` (any reason). Forgets
  // its record unless the host already runs a newer shard of that id. Quick
  // (one store write); on a worker thread.
  void OnStopped(std::string_view id);

  // Starts every recorded shard again (see the file comment), writing one
  // line per shard that did not start to `log`. Call before serving.
  // With a placement, only the shards this machine can claim start (see
  // ShardPlacement::Claim); `only`, when given, picks the records to try
  // (a dead machine's shards this machine won).
  Result<RestoreReport> RestoreAll(
      const std::function<void(const std::string&)>& log,
      const std::function<bool(std::string_view id)>& only = nullptr);

  // Records marked failed at start-up and not stopped since, by id.
  std::vector<store::ShardRecord> FailedRecords() const;
  std::optional<store::ShardRecord> FailedRecord(std::string_view id) const;

  // Shards starting or running in the host.
  size_t ActiveCount() const;

 private:
  void MarkFailed(store::ShardRecord record, const std::string& error)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t NowMs() const;
  void Log(const std::string& line) const;
  // Releases the placement of a forgotten shard, logging an error.
  void ReleasePlacement(std::string_view id) const;

  shard::ShardHost* const host_;
  const shard::KindRegistry* const kinds_;
  store::Store* const store_;
  // Create's second half: the record of the shard just started (which is
  // stopped again when it cannot be written).
  Status Record(std::string_view kind, std::string_view id,
                std::string_view params);

  const DirectoryOptions options_;

  // Serialises capacity checks with creation, so concurrent creates cannot
  // overshoot. Taken before mu_; never held by OnStopped.
  std::mutex create_mu_;
  mutable std::mutex mu_;
  std::map<std::string, store::ShardRecord, std::less<>> failed_
      GUARDED_BY(mu_);
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_SHARD_DIRECTORY_H_
