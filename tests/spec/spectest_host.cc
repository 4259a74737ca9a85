#include "spectest_host.h"

#include <cstdio>
#include <cstdlib>

#include "wasm/rt/guard.h"

namespace tessera::spec {
namespace {

using wasm::ExternKind;
using wasm::ValType;

void Print(void*, const uint64_t*, uint64_t*) {}

void Allocate(void* p) {
  auto* self =
      static_cast<std::pair<wasm_rt_memory_t*, wasm_rt_funcref_table_t*>*>(p);
  wasm_rt_allocate_memory(self->first, 1, 2);
  wasm_rt_allocate_funcref_table(self->second, 10, 20);
}

wasm::Extern Func(std::vector<ValType> params) {
  wasm::Extern x;
  x.type.kind = ExternKind::kFunc;
  x.type.func.params = std::move(params);
  x.fn = Print;
  return x;
}

wasm::Extern Global(ValType type, void* storage) {
  wasm::Extern x;
  x.type.kind = ExternKind::kGlobal;
  x.type.value = type;
  x.ptr = storage;
  return x;
}

}  // namespace

Spectest::Spectest() {
  std::pair<wasm_rt_memory_t*, wasm_rt_funcref_table_t*> both{&memory_,
                                                              &table_};
  if (wasm::rt::GuardedCall(Allocate, &both) != 0) {
    std::fprintf(stderr, "spectest: cannot allocate memory and table\n");
    std::abort();
  }
}

Spectest::~Spectest() {
  wasm_rt_free_memory(&memory_);
  wasm_rt_free_funcref_table(&table_);
}

Result<wasm::Extern> Spectest::Get(const std::string& field) {
  using V = ValType;
  if (field == "print") return Func({});
  if (field == "print_i32") return Func({V::kI32});
  if (field == "print_i64") return Func({V::kI64});
  if (field == "print_f32") return Func({V::kF32});
  if (field == "print_f64") return Func({V::kF64});
  if (field == "print_i32_f32") return Func({V::kI32, V::kF32});
  if (field == "print_f64_f64") return Func({V::kF64, V::kF64});
  if (field == "global_i32") return Global(V::kI32, &global_i32_);
  if (field == "global_i64") return Global(V::kI64, &global_i64_);
  if (field == "global_f32") return Global(V::kF32, &global_f32_);
  if (field == "global_f64") return Global(V::kF64, &global_f64_);
  if (field == "memory") {
    wasm::Extern x;
    x.type.kind = ExternKind::kMemory;
    x.type.limits = {memory_.pages, 2};
    x.ptr = &memory_;
    return x;
  }
  if (field == "table") {
    wasm::Extern x;
    x.type.kind = ExternKind::kTable;
    x.type.value = V::kFuncRef;
    x.type.limits = {table_.size, 20};
    x.ptr = &table_;
    return x;
  }
  return NotFound("unknown import: spectest has no `" + field + "`");
}

}  // namespace tessera::spec
