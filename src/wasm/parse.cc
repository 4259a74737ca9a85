// Reading, validating and policing modules. Every refusal names the exact
// offending import, export, feature or limit, because the person reading it
// is a game developer whose build produced the module.
#include "wasm/parse.h"

#include <wabt/binary-reader-ir.h>
#include <wabt/binary-reader.h>
#include <wabt/error-formatter.h>
#include <wabt/feature.h>
#include <wabt/ir.h>
#include <wabt/validator.h>

#include <charconv>
#include <string>

#include "wasm/abi_spec.h"
#include "wasm/prevalidate.h"
#include "wasm/strict_checks.h"

namespace tessera::wasm {
namespace {

constexpr uint32_t kPageBytes = 65536;

wabt::Features BaseFeatures() {
  wabt::Features f;  // defaults: mutable globals, sat conv, sign-ext,
                     // multi-value, bulk memory, reference types
  f.disable_simd();
  f.disable_threads();
  f.disable_tail_call();
  f.disable_exceptions();
  return f;
}

wabt::ReadBinaryOptions ReadOptions(const wabt::Features& features) {
  return wabt::ReadBinaryOptions(features, nullptr, /*read_debug_names=*/false,
                                 /*stop_on_first_error=*/true,
                                 /*fail_on_custom_section_error=*/false);
}

bool TryRead(std::span<const uint8_t> wasm, const wabt::Features& features,
             wabt::Module* out, wabt::Errors* errors) {
  if (!PreValidate(wasm.data(), wasm.size(), features, errors))
    return false;  // see prevalidate.h
  return wabt::Succeeded(wabt::ReadBinaryIr("module.wasm", wasm.data(),
                                            wasm.size(), ReadOptions(features),
                                            errors, out));
}

std::string FormatErrors(const wabt::Errors& errors) {
  std::string s;
  for (const auto& e : errors) {
    if (!s.empty()) s += "; ";
    if (e.loc.offset != wabt::kInvalidOffset) {
      s += "at byte " + std::to_string(e.loc.offset) + ": ";
    }
    s += e.message;
  }
  return s.empty() ? "unknown error" : s;
}

// When a module does not read with the features tessera runs, find which
// unsupported proposal it needs, so the refusal can say so.
std::string UnsupportedFeature(std::span<const uint8_t> wasm) {
  struct Probe {
    const char* what;
    void (wabt::Features::*enable)();
  };
  const Probe probes[] = {
      {"SIMD (v128 instructions); build without -msimd128",
       &wabt::Features::enable_simd},
      {"threads/atomics (shared memory or atomic instructions); build "
       "without -pthread/-matomics",
       &wabt::Features::enable_threads},
      {"tail calls (return_call); build without -mtail-call",
       &wabt::Features::enable_tail_call},
      {"exception handling (try/catch/throw); build with -fno-exceptions",
       &wabt::Features::enable_exceptions},
      {"multiple memories", &wabt::Features::enable_multi_memory},
      {"64-bit memory (memory64)", &wabt::Features::enable_memory64},
  };
  for (const Probe& p : probes) {
    wabt::Features f = BaseFeatures();
    (f.*p.enable)();
    wabt::Module m;
    wabt::Errors errors;
    if (TryRead(wasm, f, &m, &errors)) return p.what;
  }
  return "";
}

Result<ValType> ToValType(wabt::Type t) {
  switch (t) {
    case wabt::Type::I32:
      return ValType::kI32;
    case wabt::Type::I64:
      return ValType::kI64;
    case wabt::Type::F32:
      return ValType::kF32;
    case wabt::Type::F64:
      return ValType::kF64;
    case wabt::Type::FuncRef:
      return ValType::kFuncRef;
    case wabt::Type::ExternRef:
      return ValType::kExternRef;
    default:
      return Refused(std::string("unsupported value type ") + t.GetName());
  }
}

Result<FuncSig> ToSig(const wabt::FuncSignature& s) {
  FuncSig sig;
  for (wabt::Type t : s.param_types) {
    auto v = ToValType(t);
    if (!v.ok()) return v.status();
    sig.params.push_back(*v);
  }
  for (wabt::Type t : s.result_types) {
    auto v = ToValType(t);
    if (!v.ok()) return v.status();
    sig.results.push_back(*v);
  }
  return sig;
}

ExternKind ToExternKind(wabt::ExternalKind k) {
  switch (k) {
    case wabt::ExternalKind::Func:
      return ExternKind::kFunc;
    case wabt::ExternalKind::Table:
      return ExternKind::kTable;
    case wabt::ExternalKind::Memory:
      return ExternKind::kMemory;
    default:
      return ExternKind::kGlobal;
  }
}

Result<ExternType> FuncType(const wabt::Func& f) {
  auto sig = ToSig(f.decl.sig);
  if (!sig.ok()) return sig.status();
  ExternType t;
  t.kind = ExternKind::kFunc;
  t.func = *sig;
  return t;
}

Limits ToLimits(const wabt::Limits& l) {
  Limits out;
  out.initial = l.initial;
  if (l.has_max) out.max = l.max;
  return out;
}

Result<ExternType> TableType(const wabt::Table& table) {
  auto v = ToValType(table.elem_type);
  if (!v.ok()) return v.status();
  ExternType t;
  t.kind = ExternKind::kTable;
  t.value = *v;
  t.limits = ToLimits(table.elem_limits);
  return t;
}

ExternType MemoryType(const wabt::Memory& memory) {
  ExternType t;
  t.kind = ExternKind::kMemory;
  t.limits = ToLimits(memory.page_limits);
  return t;
}

Result<ExternType> GlobalType(const wabt::Global& global) {
  auto v = ToValType(global.type);
  if (!v.ok()) return v.status();
  ExternType t;
  t.kind = ExternKind::kGlobal;
  t.value = *v;
  t.is_mutable = global.mutable_;
  return t;
}

// Fills info's imports (with types), exports (with types and the import
// each re-exports, if any) and exported functions.
Status DescribeImportsAndExports(const wabt::Module& m, ModuleInfo* info) {
  // import_of[kind][index in that kind's index space] = position in imports
  std::vector<int> import_of[4];
  for (const wabt::Import* imp : m.imports) {
    info->imports.push_back(imp->module_name + "." + imp->field_name);
    ImportEntry entry{imp->module_name, imp->field_name, {}};
    Result<ExternType> type = ExternType{};
    switch (imp->kind()) {
      case wabt::ExternalKind::Func:
        type = FuncType(static_cast<const wabt::FuncImport*>(imp)->func);
        break;
      case wabt::ExternalKind::Table:
        type = TableType(static_cast<const wabt::TableImport*>(imp)->table);
        break;
      case wabt::ExternalKind::Memory:
        type = MemoryType(static_cast<const wabt::MemoryImport*>(imp)->memory);
        break;
      case wabt::ExternalKind::Global:
        type = GlobalType(static_cast<const wabt::GlobalImport*>(imp)->global);
        break;
      default:
        return Refused("imports `" + info->imports.back() +
                       "`, a kind of import tessera does not support");
    }
    if (!type.ok()) return type.status();
    entry.type = *type;
    import_of[static_cast<int>(entry.type.kind)].push_back(
        static_cast<int>(info->import_types.size()));
    info->import_types.push_back(std::move(entry));
  }
  for (const wabt::Export* e : m.exports) {
    ExportEntry entry{e->name, ToExternKind(e->kind), {}, -1};
    Result<ExternType> type = ExternType{};
    wabt::Index index = 0;
    switch (e->kind) {
      case wabt::ExternalKind::Func:
        index = m.GetFuncIndex(e->var);
        type = FuncType(*m.funcs[index]);
        break;
      case wabt::ExternalKind::Table:
        index = m.GetTableIndex(e->var);
        type = TableType(*m.tables[index]);
        break;
      case wabt::ExternalKind::Memory:
        index = m.GetMemoryIndex(e->var);
        type = MemoryType(*m.memories[index]);
        break;
      case wabt::ExternalKind::Global:
        index = m.GetGlobalIndex(e->var);
        type = GlobalType(*m.globals[index]);
        break;
      default:
        return Refused("exports `" + e->name +
                       "`, a kind of export tessera does not support");
    }
    if (!type.ok()) return type.status();
    entry.type = *type;
    const std::vector<int>& imported = import_of[static_cast<int>(entry.kind)];
    if (index < imported.size()) entry.import_index = imported[index];
    if (entry.kind == ExternKind::kFunc) {
      info->funcs.push_back({e->name, entry.type.func});
    }
    info->exports.push_back(std::move(entry));
  }
  return Status::Ok();
}

// Parses "tessera_v<N>" / "tessera_abi_v<N>" suffixes; -1 if not a number.
long VersionSuffix(std::string_view s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return -1;
  std::string_view digits = s.substr(prefix.size());
  long v = -1;
  auto [p, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || p != digits.data() + digits.size()) return -1;
  return v;
}

std::string MiB(uint64_t pages) {
  uint64_t bytes = pages * kPageBytes;
  if (bytes % (1024 * 1024) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

// The test linker passes function arguments and results as 64-bit raw
// values, which a funcref (three words in wasm2c) does not fit.
Status CheckLinkableImports(const ModuleInfo& info) {
  for (const ImportEntry& imp : info.import_types) {
    if (imp.type.kind != ExternKind::kFunc) continue;
    for (const auto* list : {&imp.type.func.params, &imp.type.func.results}) {
      for (ValType t : *list) {
        if (t == ValType::kFuncRef) {
          return Refused("imports `" + imp.module + "." + imp.field +
                         "` with a funcref parameter or result, which the "
                         "test linker cannot pass");
        }
      }
    }
  }
  return Status::Ok();
}

std::string HostFunctionList(const AbiSpec& abi) {
  std::string list;
  for (size_t k = 0; k < abi.host_functions.size(); ++k) {
    if (k > 0) list += k + 1 == abi.host_functions.size() ? " and " : ", ";
    list += abi.import_module() + "." + abi.host_functions[k].name;
  }
  return list.empty() ? "nothing" : list;
}

Status CheckImports(const wabt::Module& m, const ModuleInfo& info,
                    const CheckOptions& options) {
  if (options.link_any_imports) return CheckLinkableImports(info);
  for (const wabt::Import* imp : m.imports) {
    std::string name = imp->module_name + "." + imp->field_name;
    if (options.abi == nullptr) {
      return Refused("imports `" + name + "`; this loader mode allows none");
    }
    const AbiSpec& abi = *options.abi;
    const std::string module = abi.import_module();
    const std::string allowed = HostFunctionList(abi);
    long version = VersionSuffix(imp->module_name, abi.import_prefix);
    if (version >= 0 && version != static_cast<long>(abi.version)) {
      return Refused("unknown ABI version: imports `" + name + "` from " +
                     abi.import_prefix + std::to_string(version) +
                     ", but this host speaks " + module);
    }
    if (imp->module_name == module) {
      const HostFuncSpec* want = nullptr;
      for (const HostFuncSpec& f : abi.host_functions) {
        if (f.name == imp->field_name) want = &f;
      }
      if (want == nullptr || imp->kind() != wabt::ExternalKind::Func) {
        return Refused("imports `" + name + "`, which " + module +
                       " does not provide (it provides only the function" +
                       (abi.host_functions.size() == 1 ? " " : "s ") + allowed +
                       ")");
      }
      auto* fi = static_cast<const wabt::FuncImport*>(imp);
      auto sig = ToSig(fi->func.decl.sig);
      if (!sig.ok() || !(*sig == want->sig)) {
        return Refused("imports " + name + " with signature " +
                       (sig.ok() ? SigToString(*sig) : std::string("?")) +
                       ", expected " + SigToString(want->sig));
      }
      continue;
    }
    if (imp->module_name.rfind("wasi", 0) == 0) {
      return Refused("imports the WASI function `" + name +
                     "`: tessera modules may import only " + allowed + " (" +
                     abi.build_hint + ")");
    }
    return Refused("imports `" + name + "`: tessera modules may import only " +
                   allowed);
  }
  return Status::Ok();
}

Status CheckAbiExports(const ModuleInfo& info, const AbiSpec& abi) {
  bool marker = false;
  for (const ExportEntry& e : info.exports) {
    long v = VersionSuffix(e.name, abi.marker_prefix);
    if (v < 0) continue;
    if (v == static_cast<long>(abi.version)) {
      marker = true;
    } else {
      return Refused("unknown ABI version " + std::to_string(v) + " (export `" +
                     e.name + "`); this host speaks version " +
                     std::to_string(abi.version));
    }
  }
  if (!marker) {
    return Refused("missing required export `" + abi.marker() +
                   "`: this is not a " + abi.module_noun + " (" +
                   abi.build_hint + ")");
  }
  const ExportSpec marker_spec{abi.marker(), {{}, {}}, true};
  std::vector<const ExportSpec*> wanted = {&marker_spec};
  for (const ExportSpec& e : abi.exports) wanted.push_back(&e);
  for (const ExportSpec* r : wanted) {
    int idx = info.FindFunc(r->name);
    if (idx < 0) {
      if (!r->required) continue;
      return Refused("missing required export `" + r->name + "` " +
                     SigToString(r->sig));
    }
    if (!(info.funcs[idx].sig == r->sig)) {
      return Refused("export `" + r->name + "` has signature " +
                     SigToString(info.funcs[idx].sig) + ", expected " +
                     SigToString(r->sig));
    }
  }
  if (!abi.memory_export) return Status::Ok();
  for (const ExportEntry& e : info.exports) {
    if (e.kind == ExternKind::kMemory && e.name == "memory") {
      return Status::Ok();
    }
  }
  return Refused("missing required export `memory` (the linear memory)");
}

}  // namespace

ParsedModule::ParsedModule() = default;
ParsedModule::ParsedModule(ParsedModule&&) noexcept = default;
ParsedModule::~ParsedModule() = default;

Result<ParsedModule> ParseModule(std::span<const uint8_t> wasm,
                                 const CheckOptions& options) {
  static const uint8_t kMagic[4] = {0x00, 0x61, 0x73, 0x6d};
  if (wasm.size() < 8 || memcmp(wasm.data(), kMagic, 4) != 0) {
    return InvalidArgument(
        "not a WebAssembly module: the file does not start with the "
        "\\0asm magic bytes");
  }
  uint32_t version = wasm[4] | (wasm[5] << 8) | (wasm[6] << 16) |
                     (static_cast<uint32_t>(wasm[7]) << 24);
  if (version != 1) {
    return InvalidArgument("unsupported WebAssembly binary version " +
                           std::to_string(version) + " (expected 1)");
  }

  TESSERA_RETURN_IF_ERROR(CheckBinaryFraming(wasm));
  ParsedModule out;
  out.ir = std::make_unique<wabt::Module>();
  wabt::Errors errors;
  if (!TryRead(wasm, BaseFeatures(), out.ir.get(), &errors)) {
    std::string feature = UnsupportedFeature(wasm);
    if (!feature.empty()) {
      return Refused("uses " + feature +
                     ": tessera's ahead-of-time runtime cannot run it");
    }
    return InvalidArgument("invalid module: " + FormatErrors(errors));
  }
  errors.clear();
  wabt::ValidateOptions vopts(BaseFeatures());
  if (!wabt::Succeeded(wabt::ValidateModule(out.ir.get(), &errors, vopts))) {
    return InvalidArgument("invalid module: " + FormatErrors(errors));
  }
  TESSERA_RETURN_IF_ERROR(CheckValidation(*out.ir));

  const wabt::Module& m = *out.ir;
  ModuleInfo& info = out.info;
  TESSERA_RETURN_IF_ERROR(DescribeImportsAndExports(m, &info));
  info.function_count =
      static_cast<uint32_t>(m.funcs.size() - m.num_func_imports);
  info.code_bytes = wasm.size();

  TESSERA_RETURN_IF_ERROR(CheckImports(m, info, options));
  if (!m.starts.empty() && !options.link_any_imports) {
    return Refused(
        "has a start function: tessera modules must not run code at "
        "instantiation (do set-up in tessera_init)");
  }
  if (m.memories.size() > 1) return Refused("declares more than one memory");
  if (!m.memories.empty()) {
    const wabt::Limits& lim = m.memories[0]->page_limits;
    info.has_memory = true;
    info.initial_pages = static_cast<uint32_t>(lim.initial);
    if (lim.has_max) info.declared_max_pages = static_cast<uint32_t>(lim.max);
    uint32_t cap = options.memory_cap_pages ? options.memory_cap_pages : 65536;
    if (lim.initial > cap) {
      return Refused("initial memory of " + std::to_string(lim.initial) +
                     " pages (" + MiB(lim.initial) +
                     ") is above the memory cap of " + MiB(cap));
    }
  }
  if (options.abi != nullptr) {
    TESSERA_RETURN_IF_ERROR(CheckAbiExports(info, *options.abi));
  }
  return out;
}

Result<ModuleInfo> CheckModule(std::span<const uint8_t> wasm,
                               const CheckOptions& options) {
  auto parsed = ParseModule(wasm, options);
  if (!parsed.ok()) return parsed.status();
  return std::move(parsed->info);
}

}  // namespace tessera::wasm
