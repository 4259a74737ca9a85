// libFuzzer target: the module loader's untrusted-bytes path (read,
// validate, police, instrument, generate C). Compilation and execution are
// not fuzzed here (they need a C compiler per input).
//
// Besides memory safety it checks, for every loader mode:
//  - the same bytes always get the same verdict (and the same message);
//  - a refusal is kInvalidArgument or kRefused with a non-empty message;
//  - an accepted module's ModuleInfo is consistent: imports and their types
//    agree, the exported functions are exactly the function exports, export
//    names are unique, re-exported imports exist and have the export's kind,
//    memory fits the cap, the mode's import and export rules hold;
//  - the modes agree: a module the shard or bare mode accepts is accepted by
//    the spec-test mode with the same description, and one the shard mode
//    accepts without imports is accepted by the bare mode;
//  - the memory cap is the only thing a lower cap changes: one page below
//    the module's initial memory is refused for exactly that reason;
//  - an accepted module instruments and generates C.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "shard/shard_abi.h"
#include "wasm/abi_spec.h"
#include "wasm/codegen.h"
#include "wasm/instrument.h"
#include "wasm/loader.h"
#include "wasm/parse.h"

namespace {

using namespace tessera;
using namespace tessera::wasm;

constexpr uint32_t kCapPages = 1024;

// The loader's modes: the shard ABI (as the server loads shards), a bare
// module (no ABI, no imports) and the spec runner's linking of anything.
enum class Mode { kShard, kBare, kSpecTest };

CheckOptions OptionsFor(Mode mode, uint32_t cap) {
  CheckOptions options;
  if (mode == Mode::kShard) options.abi = &tessera::shard::ShardAbiSpec();
  options.link_any_imports = mode == Mode::kSpecTest;
  options.memory_cap_pages = cap;
  return options;
}

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "module_loader_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

bool SameType(const ExternType& a, const ExternType& b) {
  return a.kind == b.kind && a.func == b.func && a.value == b.value &&
         a.is_mutable == b.is_mutable && a.limits.initial == b.limits.initial &&
         a.limits.max == b.limits.max;
}

bool SameInfo(const ModuleInfo& a, const ModuleInfo& b) {
  if (a.funcs.size() != b.funcs.size() ||
      a.exports.size() != b.exports.size() || a.imports != b.imports ||
      a.import_types.size() != b.import_types.size())
    return false;
  for (size_t i = 0; i < a.funcs.size(); ++i) {
    if (a.funcs[i].name != b.funcs[i].name ||
        !(a.funcs[i].sig == b.funcs[i].sig))
      return false;
  }
  for (size_t i = 0; i < a.exports.size(); ++i) {
    const ExportEntry& x = a.exports[i];
    const ExportEntry& y = b.exports[i];
    if (x.name != y.name || x.kind != y.kind || !SameType(x.type, y.type) ||
        x.import_index != y.import_index)
      return false;
  }
  for (size_t i = 0; i < a.import_types.size(); ++i) {
    const ImportEntry& x = a.import_types[i];
    const ImportEntry& y = b.import_types[i];
    if (x.module != y.module || x.field != y.field || !SameType(x.type, y.type))
      return false;
  }
  return a.has_memory == b.has_memory && a.initial_pages == b.initial_pages &&
         a.declared_max_pages == b.declared_max_pages &&
         a.function_count == b.function_count && a.code_bytes == b.code_bytes;
}

bool SameVerdict(const Result<ModuleInfo>& a, const Result<ModuleInfo>& b) {
  if (a.ok() != b.ok()) return false;
  if (!a.ok()) {
    return a.status().code() == b.status().code() &&
           a.status().message() == b.status().message();
  }
  return SameInfo(a.value(), b.value());
}

void CheckConsistent(const ModuleInfo& info, Mode policy, size_t size) {
  Check(info.imports.size() == info.import_types.size(),
        "imports and import_types have different sizes");
  for (size_t i = 0; i < info.imports.size(); ++i) {
    const ImportEntry& imp = info.import_types[i];
    Check(info.imports[i] == imp.module + "." + imp.field,
          "imports[i] is not module.field of import_types[i]");
  }
  std::set<std::string> names;
  size_t func = 0;
  for (const ExportEntry& e : info.exports) {
    Check(names.insert(e.name).second, "an export name is listed twice");
    Check(e.kind == e.type.kind, "an export's kind differs from its type's");
    Check(e.import_index >= -1 &&
              e.import_index < static_cast<int>(info.import_types.size()),
          "an export re-exports an import that does not exist");
    if (e.import_index >= 0) {
      Check(info.import_types[e.import_index].type.kind == e.kind,
            "an export re-exports an import of another kind");
    }
    if (e.kind != ExternKind::kFunc) continue;
    Check(func < info.funcs.size() && info.funcs[func].name == e.name &&
              info.funcs[func].sig == e.type.func,
          "funcs is not the function exports in module order");
    Check(info.FindFunc(e.name) == static_cast<int>(func),
          "FindFunc does not find an exported function");
    ++func;
  }
  Check(func == info.funcs.size(), "funcs has more entries than exports");
  Check(info.FindFunc("no such export \x01") == -1,
        "FindFunc finds a name that is not exported");
  if (info.has_memory) {
    Check(info.initial_pages <= kCapPages, "initial memory above the cap");
    Check(!info.declared_max_pages ||
              *info.declared_max_pages >= info.initial_pages,
          "declared maximum below the initial memory");
  } else {
    Check(info.initial_pages == 0 && !info.declared_max_pages,
          "memory pages without a memory");
  }
  Check(info.code_bytes == size, "code_bytes is not the module's size");
  switch (policy) {
    case Mode::kBare:
      Check(info.imports.empty(), "bare mode accepted an import");
      break;
    case Mode::kShard: {
      for (const ImportEntry& imp : info.import_types) {
        Check(imp.module == "tessera_v1" && imp.field == "log" &&
                  imp.type.kind == ExternKind::kFunc,
              "shard mode accepted an import other than tessera_v1.log");
      }
      for (const char* required :
           {"tessera_abi_v1", "tessera_alloc", "tessera_init",
            "tessera_apply_input", "tessera_tick", "tessera_snapshot",
            "tessera_output_ptr", "tessera_output_len"}) {
        Check(info.FindFunc(required) >= 0,
              "shard mode accepted a module without a required export");
      }
      Check(names.count("memory") == 1, "shard mode accepted no memory export");
      break;
    }
    default:
      break;
  }
}

Result<ModuleInfo> CheckWith(std::span<const uint8_t> bytes, Mode mode,
                             uint32_t cap) {
  return CheckModule(bytes, OptionsFor(mode, cap));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  std::optional<Result<ModuleInfo>> verdicts[3];
  const Mode policies[3] = {Mode::kShard, Mode::kBare, Mode::kSpecTest};
  for (int p = 0; p < 3; ++p) {
    const Mode policy = policies[p];
    Result<ModuleInfo> verdict = CheckWith(bytes, policy, kCapPages);
    Check(SameVerdict(verdict, CheckWith(bytes, policy, kCapPages)),
          "the same bytes got two different verdicts");
    if (!verdict.ok()) {
      const Status& s = verdict.status();
      Check(s.code() == StatusCode::kInvalidArgument ||
                s.code() == StatusCode::kRefused,
            "a refusal is neither kInvalidArgument nor kRefused");
      Check(!s.message().empty(), "a refusal has an empty message");
      verdicts[p] = std::move(verdict);
      continue;
    }
    CheckConsistent(*verdict, policy, size);
    // (A cap of 0 means the default, 4 GiB: one page is not capped below.)
    if (verdict->has_memory && verdict->initial_pages > 1) {
      Result<ModuleInfo> low =
          CheckWith(bytes, policy, verdict->initial_pages - 1);
      Check(!low.ok() && low.status().code() == StatusCode::kRefused &&
                low.status().message().find("above the memory cap") !=
                    std::string::npos,
            "a cap one page below the initial memory is not refused for it");
    }

    CheckOptions options = OptionsFor(policy, kCapPages);
    auto parsed = ParseModule(bytes, options);
    Check(parsed.ok() && SameInfo(parsed->info, *verdict),
          "ParseModule and CheckModule disagree");
    InstrumentFuel(parsed->ir.get());
    CapMemory(parsed->ir.get(), kCapPages);
    auto c = GenerateC(parsed->ir.get(), parsed->info, true,
                       !parsed->info.import_types.empty());
    Check(c.ok(), "an accepted module does not generate C");
    verdicts[p] = std::move(verdict);
  }
  const Result<ModuleInfo>& shard = *verdicts[0];
  const Result<ModuleInfo>& bare = *verdicts[1];
  const Result<ModuleInfo>& spec = *verdicts[2];
  if (shard.ok()) {
    Check(spec.ok() && SameInfo(shard.value(), spec.value()),
          "spec-test mode refused or described differently a shard module");
    if (shard->imports.empty()) {
      Check(bare.ok() && SameInfo(shard.value(), bare.value()),
            "bare mode refused a shard module without imports");
    }
  }
  if (bare.ok()) {
    Check(spec.ok() && SameInfo(bare.value(), spec.value()),
          "spec-test mode refused or described differently a bare module");
  }
  return 0;
}
