// The shard guest ABI, tessera_v1, as data: what the loader checks a shard
// module against (ShardAbiSpec) and the host functions a shard's sandbox
// binds (ShardHostFunctions). The names and codes are in tessera/abi.h,
// shared with the guest SDK; docs/guest-abi.md describes the ABI.
#ifndef TESSERA_SHARD_SHARD_ABI_H_
#define TESSERA_SHARD_SHARD_ABI_H_

#include "guest/host_functions.h"
#include "guest/sandbox.h"
#include "wasm/abi_spec.h"
#include "wasm/loader.h"

namespace tessera::shard {

// Imports: tessera_v1.log only. Exports: the marker tessera_abi_v1, memory,
// alloc / init / apply_input / tick / snapshot / output_ptr / output_len,
// optional _initialize, restore, save, the interest and replication hooks,
// lag compensation's and the transfer and message exports. Process-wide, never
// destroyed.
const wasm::AbiSpec& ShardAbiSpec();
const guest::HostFunctionTable& ShardHostFunctions();

// The loader's checks for a shard module of a kind with `memory_mb` of
// memory: the shard ABI and the memory cap.
wasm::CheckOptions ShardCheckOptions(uint32_t memory_mb);

// The sandbox options of the shard ABI (its import module and buffer
// exports), without limits.
guest::SandboxOptions ShardSandboxOptions();

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_SHARD_ABI_H_
