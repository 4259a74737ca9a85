// The binary layouts of the transfer and message exports (tessera/abi.h,
// docs/guest-abi.md "Transfers and messages"): encoders for what the host
// passes in, decoders with every length and count checked for what the
// guest returns. Little-endian; a `str` is a u32 byte length, then the
// bytes. Pure: no guest calls.
//
// A decoder refuses (kInvalidArgument) bytes it cannot read, with a message
// that names the export, the item and the problem, e.g.
//   "tessera_outbox output: message 2: topic: length 900 runs past the end
//    (12 bytes left at byte 40)"
// It keeps values the ABI's limits forbid (long topics, too many groups,
// empty names): the host applies those limits and refuses with a reason.
#ifndef TESSERA_SHARD_TALK_ABI_H_
#define TESSERA_SHARD_TALK_ABI_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "shard/talk_types.h"

namespace tessera::shard {

// One move a module asked for in tessera_transfer_requests.
struct TransferRequestOut {
  std::string subscriber;
  std::string to;
};

// One message from a module's tessera_outbox.
struct OutgoingMessage {
  MessageTarget to;
  std::string topic;
  std::string data;
};

// tessera_transfer_in's argument: u32 flags | str subscriber | str
// peer_shard | str claims_json | str state.
std::string EncodeTransferIn(std::string_view subscriber,
                             std::string_view state,
                             std::string_view claims_json, bool returning,
                             std::string_view peer_shard);

// tessera_transfer_requests' output: u32 count | count x (str subscriber,
// str target_shard).
Result<std::vector<TransferRequestOut>> DecodeTransferRequests(
    std::string_view bytes);

// tessera_groups' output: u32 count | count x str.
Result<std::vector<std::string>> DecodeGroups(std::string_view bytes);

// tessera_outbox's output: u32 count | count x (u8 target_kind, str target,
// str topic, str data). target_kind is abi::TargetKind; kAll's target must
// be empty.
Result<std::vector<OutgoingMessage>> DecodeOutbox(std::string_view bytes);

// tessera_on_messages' argument: u32 count | count x (str from, str topic,
// str data), in the batch's order.
std::string EncodeMessages(
    std::span<const std::shared_ptr<const ShardMessage>> batch);

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_TALK_ABI_H_
