// Private to the compute instance layer (compute_abi.cc,
// module_instance.cc): the state the tessera_compute_v1 host functions
// share with the instance running them, the host-function table and the
// export signatures.
#ifndef TESSERA_COMPUTE_COMPUTE_ABI_HOST_H_
#define TESSERA_COMPUTE_COMPUTE_ABI_HOST_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "compute/host_calls.h"
#include "guest/host_functions.h"
#include "wasm/module_info.h"

namespace tessera::compute::internal {

// What the host functions of one instance share: the entry call in
// progress (whose HostCalls serve it) and last_error. The sandbox's owner
// (guest::Sandbox::set_owner, with OnLog as its log hook).
struct CallState {
  HostCalls* calls = nullptr;
  std::string last_error;  // JSON of the last failed host call
  // A size query's blob (state_get with cap 0), served to the next
  // state_get of the same call without asking the host again.
  bool state_cached = false;
  std::string state_cache;
  // The last data/shards reply (read with reply()); cleared at the start of
  // every entry call and of every data/shards call.
  std::string reply;

  // Starts (host non-null) or ends (null) an entry call.
  void Begin(HostCalls* host);
  // Records last_error {"code","message"}; returns `code`. `code_name`
  // "" = CodeName(code).
  int32_t Failed(int32_t code, std::string_view message,
                 std::string_view code_name = {});
  // r.code, recording last_error (with r.code_name) when it is negative.
  int32_t Outcome(const HostCallResult& r);
  static void OnLog(void* owner, int level, std::string_view text);
};

const guest::HostFunctionTable& ComputeHostFunctions();

// The entry exports' signatures.
const wasm::FuncSig& InitSig();   // () -> i32
const wasm::FuncSig& TickSig();   // (i32) -> i32
const wasm::FuncSig& BytesSig();  // (i32, i32) -> i32

// last_error's "code" for an ErrorCode.
const char* CodeName(int32_t code);

}  // namespace tessera::compute::internal

#endif  // TESSERA_COMPUTE_COMPUTE_ABI_HOST_H_
