// Plain data of shards that talk: moving a player between shards (the
// transfer journal's rows, the outcome of a move, the record a source keeps
// of a player that left) and messages between shards. No behaviour.
// docs/guest-abi.md "Transfers and messages" has the guest's side.
#ifndef TESSERA_SHARD_TALK_TYPES_H_
#define TESSERA_SHARD_TALK_TYPES_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::shard {

// ---- Transfers ----------------------------------------------------------

// The steps of a move's journal row. A row is written kOut in the same
// transaction as the source's save after transfer_out; it then goes, by
// compare-and-set in the same transaction as the save of the shard that
// changed, to kIn (the target took the player) or kBack (the source took
// it back). A kIn row is kept kMovedRecordSecs as the redirect record;
// a kBack row is deleted once the caller has its answer.
enum class TransferStep : uint8_t { kOut = 1, kIn = 2, kBack = 3 };
const char* TransferStepName(TransferStep step);  // "out", "in", "back"

// How long a source sends TRANSFER to a connection of a player that left
// (the target ticket's lifetime, too).
inline constexpr int64_t kMovedRecordSecs = 600;

// One move, as the journal stores it.
struct TransferRecord {
  std::string id;  // unique (random hex); the journal's key
  std::string from_shard;
  std::string to_shard;
  std::string subscriber;
  std::string claims_json = "{}";  // the auth claims given to transfer_in
  std::string state;               // transfer_out's bytes
  TransferStep step = TransferStep::kOut;
  int64_t created_unix_ms = 0;
  int64_t updated_unix_ms = 0;
};

// One compare-and-set of a row's step.
struct TransferAdvance {
  std::string id;
  TransferStep from = TransferStep::kOut;
  TransferStep to = TransferStep::kIn;
};

// Why a move did not happen; the names are the API's error codes.
enum class TransferError : uint8_t {
  kNone,
  kRefused,      // SHARD_TRANSFER_REFUSED: the target's transfer_in refused
  kNotFound,     // SHARD_NOT_FOUND: the source or target is not running
  kNoPlayer,     // SHARD_TRANSFER_NO_PLAYER: transfer_out had no entity
  kBusy,         // SHARD_TRANSFER_BUSY: this player is already moving
  kUnsupported,  // SHARD_TRANSFER_UNSUPPORTED: a module has no transfer hooks
  kInvalid,      // INVALID_ARGUMENT: same shard, empty ids, bad claims
  kFailed,       // SHARD_TRANSFER_FAILED: a store error or a failing shard
};
const char* TransferErrorCode(TransferError error);

// The answer to one requested move.
struct TransferResult {
  TransferError error = TransferError::kNone;
  std::string message;  // the module's text for kRefused; else a sentence
  bool ok() const { return error == TransferError::kNone; }
};

// A player that left `from` for `to` (the host keeps one per (from,
// subscriber) for kMovedRecordSecs; ShardSink::OnTransfer announces it).
struct MovedTo {
  std::string subscriber;
  std::string to;
  std::string claims_json = "{}";  // the claims for the target's ticket
  int64_t moved_unix_ms = 0;       // when the target's kIn committed
};

// ---- Messages -------------------------------------------------------------

enum class TargetKind : uint8_t { kShard = 0, kGroup = 1, kAll = 2 };

struct MessageTarget {
  TargetKind kind = TargetKind::kShard;
  std::string name;  // the shard id or group name; empty for kAll
};

// One message on its way (shared by every target's inbox, not copied).
struct ShardMessage {
  std::string from;  // the sending shard; "" = published by the server
  std::string topic;
  std::string data;
};

// Why a message was refused; the names are the metric's `reason` label.
enum class MessageRefusal : uint8_t {
  kTopic,      // "topic": empty or over kMaxTopicBytes
  kTooBig,     // "too_big": data over kMaxMessageDataBytes
  kRate,       // "rate": over kMaxMessagesSentPerTick in one tick
  kNotFound,   // "not_found": Shard(id) not running
  kNoHandler,  // "no_handler": the target exports no on_messages
  kInboxFull,  // "inbox_full": the target has kMaxInboxMessages queued
  kStopped,    // "stopped": queued in a shard that stopped
};
const char* MessageRefusalName(MessageRefusal reason);

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_TALK_TYPES_H_
