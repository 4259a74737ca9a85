// GuestShard's optional interest and replication exports (see
// guest_shard.h, Hook). Kept apart from the core ABI calls.
#include <string>

#include "common/text.h"
#include "shard/guest_shard.h"
#include "tessera/abi.h"

namespace tessera::shard {
namespace {

constexpr const char* kHookNames[kHookCount] = {
    abi::kExportInterestConfig,  abi::kExportEntities,
    abi::kExportInterestAreas,   abi::kExportFilter,
    abi::kExportSnapshotVisible, abi::kExportReplicationConfig,
    abi::kExportReplicated,      abi::kExportLagCompensation,
};

bool TakesArgument(Hook hook) {
  return hook == Hook::kInterestAreas || hook == Hook::kFilter ||
         hook == Hook::kSnapshotVisible;
}

}  // namespace

Status GuestShard::FailAbi(std::string message) {
  return Fail(StatusCode::kFailedPrecondition, "abi: " + message);
}

Result<HookOutput> GuestShard::CallHook(Hook hook, std::string_view arg) {
  if (failed() || !sandbox_) return StoppedStatus();
  const size_t slot = static_cast<size_t>(hook);
  const char* name = kHookNames[slot];
  if (fn_.hooks[slot] < 0) {
    return Status(StatusCode::kFailedPrecondition,
                  std::string("the module does not export ") + name);
  }
  BeginCall(name);
  Result<uint32_t> code = 0u;
  if (TakesArgument(hook)) {
    Result<guest::GuestBytes> in = Pass(arg, name);
    if (!in.ok()) return in.status();
    const uint64_t args[] = {in->ptr, in->len};
    code = GuardedCall(fn_.hooks[slot], args, name);
  } else {
    code = GuardedCall(fn_.hooks[slot], {}, name);
  }
  if (!code.ok()) return code.status();
  switch (*code) {
    case abi::kOk:
    case abi::kNoState: {
      HookOutput out;
      out.code = static_cast<int32_t>(*code);
      if (*code == abi::kOk) {
        Result<std::string> bytes =
            ReadOutput(name, hook == Hook::kSnapshotVisible ? kMaxSnapshotBytes
                                                            : kMaxOutputBytes);
        if (!bytes.ok()) return bytes.status();
        out.bytes = std::move(bytes).value();
      }
      return out;
    }
    case abi::kError: {
      Result<std::string> text = ReadText(name);
      if (!text.ok()) return text.status();
      return Fail(StatusCode::kFailedPrecondition,
                  std::string("error: ") + name + " failed: " + *text);
    }
    default:
      return Fail(StatusCode::kFailedPrecondition,
                  std::string("abi: ") + name + " returned unknown code " +
                      std::to_string(*code));
  }
}

}  // namespace tessera::shard
