// What a compute module's host functions ask of the host during one entry
// call (include/tessera/compute_abi.h). The instance layer
// (module_instance.cc) reads and bounds-checks the guest's arguments,
// enforces the ABI's size limits and turns results into the ABI's return
// codes and last_error JSON; the engine implements HostCalls per run
// (egress budgets, the state revision guard, event cascades, NOTIFY
// delivery, counting) and the app's data and shards operations.
//
// Called on the thread running the entry call, inside the guest call: must
// not block for long.
#ifndef TESSERA_COMPUTE_HOST_CALLS_H_
#define TESSERA_COMPUTE_HOST_CALLS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::compute {

// A host call's outcome: `code` >= 0 is success (a count where the ABI
// says so); a negative code is a compute_abi::ErrorCode and `message`
// says why (it becomes last_error's "message").
struct HostCallResult {
  int32_t code = 0;
  std::string message;
  // last_error's "code" when set (data and shards errors: "ROW_NOT_FOUND",
  // "SHARD_NOT_FOUND", ...); else the ErrorCode's kCode* string.
  std::string code_name;

  static HostCallResult Ok(int32_t count = 0) { return {count, {}, {}}; }
  static HostCallResult Error(int32_t code, std::string message) {
    return {code, std::move(message), {}};
  }
};

class HostCalls {
 public:
  virtual ~HostCalls() = default;
  virtual int64_t NowMs() = 0;
  virtual void FillRandom(std::span<uint8_t> out) = 0;
  // The blob (`found` false: never set). Errors as HostCallResult codes.
  virtual HostCallResult GetState(std::string* bytes) = 0;
  // bytes.size() <= kMaxStateBytes (checked by the caller).
  virtual HostCallResult SetState(std::string_view bytes) = 0;
  // Sizes and names already checked against the ABI's limits.
  virtual HostCallResult EmitEvent(std::string_view name,
                                   std::string_view payload) = 0;
  virtual HostCallResult EmitChannel(std::string_view channel,
                                     std::string_view payload) = 0;
  virtual HostCallResult EmitSpatial(std::string_view shard, float x, float y,
                                     float radius,
                                     std::string_view payload) = 0;
  // The app's data and shards (compute_abi.h kImportData / kImportShards):
  // `op` and `request` (JSON, size already checked against
  // kMaxDataRequestBytes) as the guest gave them; on success `*reply` is
  // the JSON reply (<= kMaxReplyBytes) and the result's code its size.
  // The defaults refuse (hosts without the app's data: test fakes).
  virtual HostCallResult Data(std::string_view op, std::string_view request,
                              std::string* reply);
  virtual HostCallResult Shards(std::string_view op, std::string_view request,
                                std::string* reply);
  // A guest log line (already cut to valid UTF-8) with its level.
  virtual void Log(int level, std::string_view text) = 0;
};

inline HostCallResult HostCalls::Data(std::string_view, std::string_view,
                                      std::string*) {
  return HostCallResult::Error(-9, "this host has no app data");
}
inline HostCallResult HostCalls::Shards(std::string_view, std::string_view,
                                        std::string*) {
  return HostCallResult::Error(-9, "this host has no shards");
}

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_HOST_CALLS_H_
