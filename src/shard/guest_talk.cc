// GuestShard's transfer and message exports (guest_shard.h, "Transfers and
// messages"; docs/guest-abi.md). Layouts are in talk_abi.h.
#include <string>
#include <utility>

#include "shard/guest_shard.h"
#include "shard/talk_abi.h"
#include "tessera/abi.h"

namespace tessera::shard {
namespace {

std::string UnknownCode(const char* name, uint32_t code) {
  return std::string("abi: ") + name + " returned unknown code " +
         std::to_string(code);
}

}  // namespace

Status GuestShard::CheckTalkExports() const {
  const bool out = fn_.transfer_out >= 0;
  const bool in = fn_.transfer_in >= 0;
  if (out != in) {
    return Refused(std::string("the module exports ") +
                   (out ? abi::kExportTransferOut : abi::kExportTransferIn) +
                   " without " +
                   (out ? abi::kExportTransferIn : abi::kExportTransferOut) +
                   ": a shard that moves players needs both");
  }
  if (fn_.transfer_requests >= 0 && !out) {
    return Refused(std::string("the module exports ") +
                   abi::kExportTransferRequests + " without " +
                   abi::kExportTransferOut + " and " + abi::kExportTransferIn +
                   ": it cannot move the players it asks to move");
  }
  return Status::Ok();
}

Status GuestShard::CheckTalkCall(int func, const char* name) const {
  if (failed() || !sandbox_) return StoppedStatus();
  if (func < 0) {
    return Status(StatusCode::kFailedPrecondition,
                  std::string("the module does not export ") + name);
  }
  return Status::Ok();
}

Result<std::optional<std::string>> GuestShard::TransferOut(
    std::string_view subscriber) {
  const char* name = abi::kExportTransferOut;
  TESSERA_RETURN_IF_ERROR(CheckTalkCall(fn_.transfer_out, name));
  BeginCall(name);
  Result<guest::GuestBytes> sid = Pass(subscriber, name);
  if (!sid.ok()) return sid.status();
  const uint64_t args[] = {sid->ptr, sid->len};
  Result<uint32_t> code = GuardedCall(fn_.transfer_out, args, name);
  if (!code.ok()) return code.status();
  switch (*code) {
    case abi::kOk: {
      Result<std::string> state = ReadOutput(name, abi::kMaxTransferStateBytes);
      if (!state.ok()) return state.status();
      return std::optional<std::string>(std::move(state).value());
    }
    case abi::kNoState:
      return std::optional<std::string>();
    case abi::kError: {
      Result<std::string> text = ReadText(name);
      if (!text.ok()) return text.status();
      return Refused(std::move(text).value());
    }
    default:
      return Fail(StatusCode::kFailedPrecondition, UnknownCode(name, *code));
  }
}

Status GuestShard::TransferIn(std::string_view subscriber,
                              std::string_view state,
                              std::string_view claims_json, bool returning,
                              std::string_view peer_shard) {
  const char* name = abi::kExportTransferIn;
  TESSERA_RETURN_IF_ERROR(CheckTalkCall(fn_.transfer_in, name));
  BeginCall(name);
  Result<guest::GuestBytes> arg = Pass(
      EncodeTransferIn(subscriber, state, claims_json, returning, peer_shard),
      name);
  if (!arg.ok()) return arg.status();
  const uint64_t args[] = {arg->ptr, arg->len};
  Result<uint32_t> code = GuardedCall(fn_.transfer_in, args, name);
  if (!code.ok()) return code.status();
  switch (*code) {
    case abi::kOk:
      return Status::Ok();
    case abi::kError: {
      Result<std::string> text = ReadText(name);
      if (!text.ok()) return text.status();
      return Refused(std::move(text).value());
    }
    default:
      return Fail(StatusCode::kFailedPrecondition, UnknownCode(name, *code));
  }
}

Result<std::optional<std::string>> GuestShard::CallListExport(
    int func, const char* name, size_t max_bytes) {
  TESSERA_RETURN_IF_ERROR(CheckTalkCall(func, name));
  BeginCall(name);
  Result<uint32_t> code = GuardedCall(func, {}, name);
  if (!code.ok()) return code.status();
  switch (*code) {
    case abi::kOk: {
      Result<std::string> bytes = ReadOutput(name, max_bytes);
      if (!bytes.ok()) return bytes.status();
      return std::optional<std::string>(std::move(bytes).value());
    }
    case abi::kNoState:
      return std::optional<std::string>();
    case abi::kError: {
      Result<std::string> text = ReadText(name);
      if (!text.ok()) return text.status();
      return Fail(StatusCode::kFailedPrecondition,
                  std::string("error: ") + name + " failed: " + *text);
    }
    default:
      return Fail(StatusCode::kFailedPrecondition, UnknownCode(name, *code));
  }
}

Result<std::vector<TransferRequestOut>> GuestShard::TakeTransferRequests() {
  if (failed() || !sandbox_) return StoppedStatus();
  if (fn_.transfer_requests < 0) return std::vector<TransferRequestOut>();
  Result<std::optional<std::string>> bytes =
      CallListExport(fn_.transfer_requests, abi::kExportTransferRequests);
  if (!bytes.ok()) return bytes.status();
  if (!bytes->has_value()) return std::vector<TransferRequestOut>();
  Result<std::vector<TransferRequestOut>> requests =
      DecodeTransferRequests(**bytes);
  if (!requests.ok()) return FailAbi(requests.status().message());
  return requests;
}

Result<std::vector<std::string>> GuestShard::Groups() {
  if (failed() || !sandbox_) return StoppedStatus();
  if (fn_.groups < 0) return std::vector<std::string>();
  Result<std::optional<std::string>> bytes =
      CallListExport(fn_.groups, abi::kExportGroups);
  if (!bytes.ok()) return bytes.status();
  if (!bytes->has_value()) return std::vector<std::string>();
  Result<std::vector<std::string>> groups = DecodeGroups(**bytes);
  if (!groups.ok()) return FailAbi(groups.status().message());
  return groups;
}

Result<std::vector<OutgoingMessage>> GuestShard::TakeOutbox() {
  if (failed() || !sandbox_) return StoppedStatus();
  if (fn_.outbox < 0) return std::vector<OutgoingMessage>();
  Result<std::optional<std::string>> bytes =
      CallListExport(fn_.outbox, abi::kExportOutbox);
  if (!bytes.ok()) return bytes.status();
  if (!bytes->has_value()) return std::vector<OutgoingMessage>();
  Result<std::vector<OutgoingMessage>> messages = DecodeOutbox(**bytes);
  if (!messages.ok()) return FailAbi(messages.status().message());
  return messages;
}

Status GuestShard::DeliverMessages(
    std::span<const std::shared_ptr<const ShardMessage>> batch) {
  const char* name = abi::kExportOnMessages;
  TESSERA_RETURN_IF_ERROR(CheckTalkCall(fn_.on_messages, name));
  if (batch.empty()) return Status::Ok();
  return DeliverBytes(fn_.on_messages, name, EncodeMessages(batch));
}

Status GuestShard::DeliverBytes(int func, const char* name,
                                std::string_view bytes) {
  BeginCall(name);
  Result<guest::GuestBytes> arg = Pass(bytes, name);
  if (!arg.ok()) return arg.status();
  const uint64_t args[] = {arg->ptr, arg->len};
  Result<uint32_t> code = GuardedCall(func, args, name);
  if (!code.ok()) return code.status();
  switch (*code) {
    case abi::kOk:
      return Status::Ok();
    case abi::kError: {
      Result<std::string> text = ReadText(name);
      if (!text.ok()) return text.status();
      if (env_.forward_log) {
        env_.forward_log(abi::kLogWarn,
                         std::string(name) + " refused: " + *text);
      }
      return Status::Ok();
    }
    default:
      return Fail(StatusCode::kFailedPrecondition, UnknownCode(name, *code));
  }
}

}  // namespace tessera::shard
