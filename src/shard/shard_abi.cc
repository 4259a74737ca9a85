#include "shard/shard_abi.h"

#include "tessera/abi.h"

namespace tessera::shard {
namespace {

using wasm::ExportSpec;
using wasm::FuncSig;
using V = wasm::ValType;

FuncSig I32Result(int i32_params) {
  FuncSig sig;
  sig.params.assign(static_cast<size_t>(i32_params), V::kI32);
  sig.results = {V::kI32};
  return sig;
}

wasm::AbiSpec MakeSpec() {
  wasm::AbiSpec spec;
  spec.import_prefix = "tessera_v";
  spec.version = abi::kVersion;
  spec.host_functions = ShardHostFunctions().Specs();
  spec.marker_prefix = abi::kAbiMarkerPrefix;
  spec.memory_export = true;
  spec.module_noun = "tessera shard module";
  spec.build_hint =
      "build with the tessera SDK's recipe, which links no WASI; see "
      "docs/guest-abi.md";
  spec.exports = {
      {abi::kExportInitialize, {{}, {}}, false},
      {abi::kExportAlloc, I32Result(1), true},
      {abi::kExportInit, I32Result(5), true},
      {abi::kExportRestore, I32Result(7), false},
      {abi::kExportApplyInput, I32Result(4), true},
      {abi::kExportTick, {{V::kI64}, {V::kI32}}, true},
      {abi::kExportSnapshot, I32Result(0), true},
      {abi::kExportSave, I32Result(0), false},
      {abi::kExportOutputPtr, I32Result(0), true},
      {abi::kExportOutputLen, I32Result(0), true},
      {abi::kExportInterestConfig, I32Result(0), false},
      {abi::kExportEntities, I32Result(0), false},
      {abi::kExportInterestAreas, I32Result(2), false},
      {abi::kExportFilter, I32Result(2), false},
      {abi::kExportSnapshotVisible, I32Result(2), false},
      {abi::kExportReplicationConfig, I32Result(0), false},
      {abi::kExportReplicated, I32Result(0), false},
      {abi::kExportLagCompensation, I32Result(0), false},
      {abi::kExportApplyInputAt, I32Result(6), false},
      {abi::kExportTransferOut, I32Result(2), false},
      {abi::kExportTransferIn, I32Result(2), false},
      {abi::kExportTransferRequests, I32Result(0), false},
      {abi::kExportGroups, I32Result(0), false},
      {abi::kExportOutbox, I32Result(0), false},
      {abi::kExportOnMessages, I32Result(2), false},
      {abi::kExportCalls, I32Result(0), false},
      {abi::kExportOnCallResult, I32Result(2), false},
      {abi::kExportWrites, I32Result(0), false},
  };
  return spec;
}

}  // namespace

const guest::HostFunctionTable& ShardHostFunctions() {
  static const auto* table = new guest::HostFunctionTable(
      {guest::Sandbox::LogFunction(abi::kImportLog)});
  return *table;
}

const wasm::AbiSpec& ShardAbiSpec() {
  static const auto* spec = new wasm::AbiSpec(MakeSpec());
  return *spec;
}

wasm::CheckOptions ShardCheckOptions(uint32_t memory_mb) {
  constexpr uint32_t kPagesPerMiB = 16;
  wasm::CheckOptions check;
  check.abi = &ShardAbiSpec();
  check.memory_cap_pages = memory_mb * kPagesPerMiB;
  return check;
}

guest::SandboxOptions ShardSandboxOptions() {
  guest::SandboxOptions o;
  o.import_module = abi::kImportModule;
  o.alloc_export = abi::kExportAlloc;
  o.output_ptr_export = abi::kExportOutputPtr;
  o.output_len_export = abi::kExportOutputLen;
  o.panic_level = abi::kLogPanic;
  return o;
}

}  // namespace tessera::shard
