// What an import can be bound to, and the spec's import-matching rules.
// Production modules bind only host functions (Instance::Create with
// HostImports); the WebAssembly spec conformance runner binds externs of
// every kind (Instance::CreateLinked, CheckOptions::link_any_imports).
#ifndef TESSERA_WASM_LINK_H_
#define TESSERA_WASM_LINK_H_

#include <cstdint>

#include "common/status.h"
#include "wasm/module_info.h"

namespace tessera::wasm {

// A host function: raw argument and result values as in Instance::Call.
// Runs on the calling guest's thread, inside its guarded call; may trap
// (wasm_rt_trap) but must then hold no object with a destructor.
using HostFn = void (*)(void* ctx, const uint64_t* args, uint64_t* results);

// A value an import can be bound to: another instance's export
// (Instance::Export) or host storage. Not owned: whoever provides it keeps
// it alive while any instance bound to it lives.
struct Extern {
  // For memories and tables, limits.initial is the current size (the spec
  // matches imports against it).
  ExternType type;
  HostFn fn = nullptr;  // kFunc
  void* ctx = nullptr;  // kFunc: fn's first argument
  // kGlobal: the value's storage (u32, u64, f32, f64 or a wasm2c reference);
  // kMemory: a wasm_rt_memory_t; kTable: a wasm_rt_funcref_table_t (or
  // wasm_rt_externref_table_t for externref tables).
  void* ptr = nullptr;
};

// Whether `got` satisfies `wanted` (the spec's import matching): same kind;
// functions of the same type; globals of the same type and mutability;
// tables of the same element type, and memories and tables whose current
// size is at least the import's minimum and whose maximum, if the import
// declares one, exists and is no larger.
// Errors: kRefused "incompatible import type: ...", naming both types.
Status MatchImport(const ImportEntry& wanted, const Extern& got);

}  // namespace tessera::wasm

#endif  // TESSERA_WASM_LINK_H_
