// GuestShard's keyed call and entity write exports (guest_shard.h, "Keyed
// calls and entity writes"; docs/guest-abi.md). The JSON is read by
// calls_json.h.
#include <string>
#include <utility>

#include "shard/calls_json.h"
#include "shard/guest_shard.h"
#include "tessera/abi.h"

namespace tessera::shard {

Status GuestShard::CheckCallExports() const {
  const bool calls = fn_.calls >= 0;
  const bool results = fn_.on_call_result >= 0;
  if (calls == results) return Status::Ok();
  return Refused(std::string("the module exports ") +
                 (calls ? abi::kExportCalls : abi::kExportOnCallResult) +
                 " without " +
                 (calls ? abi::kExportOnCallResult : abi::kExportCalls) +
                 ": a shard that makes keyed calls needs both");
}

Result<ParsedCalls> GuestShard::TakeCalls() {
  if (failed() || !sandbox_) return StoppedStatus();
  if (!has_calls()) return ParsedCalls();
  Result<std::optional<std::string>> bytes =
      CallListExport(fn_.calls, abi::kExportCalls, abi::kMaxCallsOutputBytes);
  if (!bytes.ok()) return bytes.status();
  if (!bytes->has_value()) return ParsedCalls();
  return ParseCalls(**bytes);
}

Result<ParsedWrites> GuestShard::TakeWrites() {
  if (failed() || !sandbox_) return StoppedStatus();
  if (!has_writes()) return ParsedWrites();
  Result<std::optional<std::string>> bytes = CallListExport(
      fn_.writes, abi::kExportWrites, abi::kMaxWritesOutputBytes);
  if (!bytes.ok()) return bytes.status();
  if (!bytes->has_value()) return ParsedWrites();
  return ParseWrites(**bytes);
}

Status GuestShard::DeliverCallResult(const CallResult& result) {
  const char* name = abi::kExportOnCallResult;
  TESSERA_RETURN_IF_ERROR(CheckTalkCall(fn_.on_call_result, name));
  if (fn_.calls < 0) {
    return Status(
        StatusCode::kFailedPrecondition,
        std::string("the module does not export ") + abi::kExportCalls);
  }
  return DeliverBytes(fn_.on_call_result, name, CallResultArgument(result));
}

}  // namespace tessera::shard
