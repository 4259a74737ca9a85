// ComputeStore in memory: the engine's tests and the in-memory server mode.
// Follows compute_store.h to the letter (compute_store_conformance.h is the
// suite it and the SQLite store pass); nothing survives the process.
//
// Shared rules (compute_store_rules.h): ListRuns/ListLogs cap the limit at
// 1000 and a limit <= 0 returns nothing; usage minutes are floored to a
// multiple of 60000; runs, usage and logs may name a module id the store
// does not know (a run recorded while its module is being deleted is not
// an error), and DeleteModule removes them with the module. The state blob
// has no size limit here: the ABI's 256 KiB is enforced by the instance.
//
// Thread-safety: every method takes one mutex for its whole operation.
#ifndef TESSERA_COMPUTE_MEMORY_COMPUTE_STORE_H_
#define TESSERA_COMPUTE_MEMORY_COMPUTE_STORE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "compute/compute_store.h"
#include "compute/compute_types.h"

namespace tessera::compute {

class MemoryComputeStore final : public ComputeStore {
 public:
  // `wall_clock` dates records (created/updated); null: RealWallClock. Not
  // owned; must outlive the store.
  explicit MemoryComputeStore(const WallClock* wall_clock = nullptr);

  Result<ModuleRecord> UpsertModule(std::string_view name,
                                    std::string_view description,
                                    bool always_on) override;
  Result<ModuleRecord> GetModule(std::string_view name) override;
  Result<std::vector<ModuleRecord>> ListModules() override;
  Status UpdateModuleState(const ModuleRecord& record) override;
  Status DeleteModule(int64_t module_id) override;

  Result<int64_t> AddVersion(const VersionRecord& version) override;
  Result<VersionRecord> GetVersion(int64_t module_id,
                                   int64_t version_no) override;
  Result<std::vector<VersionRecord>> ListVersions(int64_t module_id,
                                                  int64_t limit,
                                                  bool with_files) override;
  Result<std::vector<VersionRecord>> ListUnfinishedVersions() override;
  Status UpdateVersionCompile(const VersionRecord& version) override;
  Result<std::optional<VersionRecord>> FindCompiled(
      std::string_view source_hash) override;

  Result<TriggerRecord> UpsertTrigger(const TriggerRecord& trigger) override;
  Result<std::vector<TriggerRecord>> ListTriggers(int64_t module_id) override;
  Status DeleteTrigger(int64_t trigger_id) override;

  Result<std::optional<Policy>> GetPolicy() override;
  Status SetPolicy(const Policy& policy) override;

  Status AddRuns(std::span<const RunRecord> runs) override;
  Result<std::vector<RunRecord>> ListRuns(const RunFilter& filter) override;
  Status AddUsage(std::span<const UsageRow> rows) override;
  Result<std::vector<UsageRow>> ListUsage(int64_t module_id,
                                          int64_t since_ms) override;
  Status AddLogs(std::span<const LogRecord> logs) override;
  Result<std::vector<LogRecord>> ListLogs(const LogFilter& filter) override;
  Result<int64_t> Prune(int64_t before_ms, int64_t usage_before_ms) override;

  Result<StateBlob> GetState(int64_t module_id) override;
  Result<int64_t> SetState(int64_t module_id, std::string_view bytes,
                           int64_t expected_revision,
                           bool lease_holder) override;

 private:
  struct StoredVersion {
    VersionRecord record;
    int64_t seq = 0;  // insertion order, over all modules
  };
  using VersionKey = std::pair<int64_t, int64_t>;  // (module_id, version_no)

  int64_t NowMs() const { return wall_clock_->UnixNowMs(); }
  bool HasModuleLocked(int64_t module_id) const EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return modules_.count(module_id) > 0;
  }

  const WallClock* const wall_clock_;
  mutable std::mutex mu_;
  std::map<int64_t, ModuleRecord> modules_ GUARDED_BY(mu_);  // by id
  std::map<VersionKey, StoredVersion> versions_ GUARDED_BY(mu_);
  std::map<int64_t, TriggerRecord> triggers_ GUARDED_BY(mu_);  // by id
  std::optional<Policy> policy_ GUARDED_BY(mu_);
  std::vector<RunRecord> runs_ GUARDED_BY(mu_);  // in id order
  std::map<std::pair<int64_t, int64_t>, UsageRow> usage_
      GUARDED_BY(mu_);                           // (module, minute)
  std::vector<LogRecord> logs_ GUARDED_BY(mu_);  // in id order
  std::map<int64_t, StateBlob> states_ GUARDED_BY(mu_);
  int64_t next_module_id_ GUARDED_BY(mu_) = 1;
  int64_t next_version_seq_ GUARDED_BY(mu_) = 1;
  int64_t next_trigger_id_ GUARDED_BY(mu_) = 1;
  int64_t next_run_id_ GUARDED_BY(mu_) = 1;
  int64_t next_log_id_ GUARDED_BY(mu_) = 1;
};

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_MEMORY_COMPUTE_STORE_H_
