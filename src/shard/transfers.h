// Moves of players between shards, the host's side (the flow is in
// docs/shards-that-talk.md and TALK.md "The flow of a move"). This header
// holds the pieces of the state machine that are plain data or pure:
//   - Move: one move on its way. It travels source -> target -> source
//     through the shards' mailboxes (ShardHost's HostedShard), so exactly
//     one thread holds it at a time; whoever ends it calls `done` once.
//   - CheckMove: the checks before transfer_out, in the contract's order.
//   - MovedRecords: the redirect records (from, subscriber) -> MovedTo, kept
//     kMovedRecordSecs after the target's commit.
// The state machine itself (ShardHost members) is in transfer_flow.cc,
// Transfer and the recovery at boot in transfers.cc.
#ifndef TESSERA_SHARD_TRANSFERS_H_
#define TESSERA_SHARD_TRANSFERS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/thread_annotations.h"
#include "shard/talk_types.h"

namespace tessera::shard {

class HostedShard;

struct Move {
  TransferRecord record;  // id and state once transfer_out gave them
  // The admin caller's answer (null for a move the module started).
  std::function<void(TransferResult)> done;
  std::weak_ptr<HostedShard> source;
  int64_t requested_us = 0;  // host clock: when the move was asked for
  int64_t committed_us = 0;  // when the target's kIn committed (0: not)
  // Set by the target (or by whoever found it could not go on).
  TransferResult outcome;
  bool ended = false;  // ShardHost::EndMove ran (done called)
};

// What a source knows of the target when a move starts.
struct MoveTargetInfo {
  bool running = false;        // listed and running
  bool has_transfers = false;  // exports transfer_out and transfer_in
};

// The checks before transfer_out, in this order: same shard or empty ids ->
// kInvalid; target not running -> kNotFound; source or target without
// transfer hooks -> kUnsupported; the player already moving -> kBusy.
// nullopt: go on.
std::optional<TransferResult> CheckMove(const TransferRecord& move,
                                        bool source_has_transfers,
                                        const MoveTargetInfo& target,
                                        bool already_moving);

inline constexpr int64_t kMovedRecordMs = kMovedRecordSecs * 1000;

// The words of the host's answers and log lines about moves.
TransferResult MoveError(TransferError error, std::string message);
std::string QuoteForLog(std::string_view text);     // "text", escaped
std::string DescribeMove(const TransferRecord& r);  // move of "p" from ...

// Whether `claims_json` is a JSON object (the auth claims of a move).
bool IsJsonObject(std::string_view claims_json);

// The redirect records of players that left a shard. Thread-safe.
class MovedRecords {
 public:
  // Records that `moved.subscriber` left `from` (replacing an older record
  // of the same pair, whose journal id is returned); `journal_id` is its kIn
  // row, deleted on expiry.
  std::optional<std::string> Record(std::string_view from, MovedTo moved,
                                    std::string journal_id);
  // The record of (from, subscriber) younger than kMovedRecordSecs at
  // `now_unix_ms`, or nullopt.
  std::optional<MovedTo> Find(std::string_view from,
                              std::string_view subscriber,
                              int64_t now_unix_ms) const;
  // Drops the record of (from, subscriber) (the player came back); returns
  // its journal id, or nullopt.
  std::optional<std::string> Erase(std::string_view from,
                                   std::string_view subscriber);
  // Drops records kMovedRecordSecs old or more; returns their journal ids.
  std::vector<std::string> Expire(int64_t now_unix_ms);
  size_t size() const;

 private:
  struct Entry {
    MovedTo moved;
    std::string journal_id;
  };
  using Key = std::pair<std::string, std::string>;  // from, subscriber
  mutable std::mutex mu_;
  std::map<Key, Entry, std::less<>> records_ GUARDED_BY(mu_);
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_TRANSFERS_H_
