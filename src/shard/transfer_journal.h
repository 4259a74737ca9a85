// The transfer journal: the durable rows of moves between shards, written
// in the same transaction as the save of the shard that changed, so that a
// process killed at any moment restarts with each moving player in exactly
// one shard (for modules that save). See talk_types.h for the steps.
//
// Implemented by the stores (store::SqliteStore, store::PgStore) and by
// MemoryStateStore, each of which is also the shard::StateStore whose
// saves these transactions replace.
//
// Thread-safety: any thread, concurrently.
#ifndef TESSERA_SHARD_TRANSFER_JOURNAL_H_
#define TESSERA_SHARD_TRANSFER_JOURNAL_H_

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "shard/talk_types.h"

namespace tessera::shard {

class TransferJournal {
 public:
  virtual ~TransferJournal() = default;

  // In one transaction: inserts every record (each with step kOut) and,
  // when `source_state` is set, replaces the saved state of `source_shard`
  // (the state after the players left). All or nothing. Zero timestamps are
  // filled in. Errors: kAlreadyExists (a record's id exists, or its
  // subscriber already has a kOut row from the same shard; nothing is
  // written), kIo.
  virtual Status BeginTransfers(
      std::span<const TransferRecord> records, std::string_view source_shard,
      std::optional<std::string_view> source_state) = 0;

  // In one transaction: compare-and-set of each row's step from
  // `advance.from` to `advance.to` (updated time = now) and, when `state` is
  // set, replaces the saved state of `shard_id`. All or nothing.
  // The steps apply in order (an id may appear twice).
  // Errors: kNotFound (a row is missing), kFailedPrecondition (a row is not
  // at `from`; nothing is written), kInvalidArgument (a step that is not a
  // TransferStep, or a `to` of kOut: a row never goes back to kOut), kIo.
  virtual Status AdvanceTransfers(std::span<const TransferAdvance> steps,
                                  std::string_view shard_id,
                                  std::optional<std::string_view> state) = 0;

  // Every row, oldest first. Errors: kIo.
  virtual Result<std::vector<TransferRecord>> ListTransfers() = 0;

  // Deletes the rows (absent ids are ignored), in one transaction.
  // Errors: kIo.
  virtual Status DeleteTransfers(std::span<const std::string> ids) = 0;
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_TRANSFER_JOURNAL_H_
