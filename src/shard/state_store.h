// Where shards' saved state lives (the bytes a module's tessera_save
// returned), keyed by shard id. The stores are store::SqliteStore and
// store::PgStore (src/store/); MemoryStateStore serves tests and the
// in-memory mode. Each is also the shard::TransferJournal
// (transfer_journal.h) whose transactions replace these saves.
//
// Thread-safety: implementations must allow calls from any thread,
// concurrently (workers save in parallel).
#ifndef TESSERA_SHARD_STATE_STORE_H_
#define TESSERA_SHARD_STATE_STORE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "shard/talk_types.h"
#include "shard/transfer_journal.h"

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

// The checks every TransferJournal makes of an AdvanceTransfers step before
// it writes anything: kInvalidArgument for a step that is not a
// TransferStep, or a `to` of kOut (a row never goes back to kOut, so
// BeginTransfers' one-kOut-row-per-(from_shard, subscriber) check holds).
Status CheckTransferAdvance(const TransferAdvance& advance);
// The step stored as `value`, or nullopt when it is none (a corrupt row).
std::optional<TransferStep> TransferStepFromInt(int64_t value);
// The journal's refusals, worded once for every implementation.
Status TransferIdExists(std::string_view id);  // kAlreadyExists
Status AlreadyMovingOut(const TransferRecord& record,
                        std::string_view out_id);  // kAlreadyExists
Status NoTransfer(std::string_view id);            // kNotFound
Status TransferNotAt(const TransferAdvance& advance,
                     TransferStep actual);  // kFailedPrecondition

// Saved states and the transfer journal in memory; the journal follows
// TransferJournal to the letter (all or nothing, the same errors as the
// SQLite store).
class MemoryStateStore final : public StateStore, public TransferJournal {
 public:
  // `wall_clock` dates the journal's rows (null: RealWallClock); not owned,
  // must outlive the store.
  explicit MemoryStateStore(const WallClock* wall_clock = nullptr);

  Status Save(std::string_view shard_id, std::string_view bytes) override;
  Result<std::optional<std::string>> Load(std::string_view shard_id) override;
  Status Forget(std::string_view shard_id) override;
  // Number of state writes so far: Save calls plus journal transactions
  // that replaced a state (for tests).
  size_t saves() const;

  // TransferJournal. ListTransfers: by creation time, then insertion order.
  Status BeginTransfers(std::span<const TransferRecord> records,
                        std::string_view source_shard,
                        std::optional<std::string_view> source_state) override;
  Status AdvanceTransfers(std::span<const TransferAdvance> steps,
                          std::string_view shard_id,
                          std::optional<std::string_view> state) override;
  Result<std::vector<TransferRecord>> ListTransfers() override;
  Status DeleteTransfers(std::span<const std::string> ids) override;

 private:
  struct Row {
    TransferRecord record;
    uint64_t seq = 0;  // insertion order
  };

  void SaveLocked(std::string_view shard_id, std::string_view bytes)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The id of the kOut row of (from_shard, subscriber), or null.
  const std::string* OutRowLocked(std::string_view from_shard,
                                  std::string_view subscriber) const
      EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const WallClock* const wall_clock_;
  mutable std::mutex mu_;
  std::map<std::string, std::string, std::less<>> states_ GUARDED_BY(mu_);
  size_t saves_ GUARDED_BY(mu_) = 0;
  std::map<std::string, Row, std::less<>> transfers_ GUARDED_BY(mu_);
  uint64_t next_seq_ GUARDED_BY(mu_) = 0;
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_STATE_STORE_H_
