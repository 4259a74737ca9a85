#include "wasm/link.h"

namespace tessera::wasm {
namespace {

bool LimitsMatch(const Limits& wanted, const Limits& got) {
  if (got.initial < wanted.initial) return false;
  if (!wanted.max) return true;
  return got.max && *got.max <= *wanted.max;
}

bool TypesMatch(const ExternType& wanted, const ExternType& got) {
  if (wanted.kind != got.kind) return false;
  switch (wanted.kind) {
    case ExternKind::kFunc:
      return wanted.func == got.func;
    case ExternKind::kGlobal:
      return wanted.value == got.value && wanted.is_mutable == got.is_mutable;
    case ExternKind::kMemory:
      return LimitsMatch(wanted.limits, got.limits);
    case ExternKind::kTable:
      return wanted.value == got.value &&
             LimitsMatch(wanted.limits, got.limits);
  }
  return false;
}

}  // namespace

Status MatchImport(const ImportEntry& wanted, const Extern& got) {
  if (TypesMatch(wanted.type, got.type)) return Status::Ok();
  return Refused("incompatible import type: `" + wanted.module + "." +
                 wanted.field + "` is imported as " +
                 ExternTypeToString(wanted.type) + " but the export is " +
                 ExternTypeToString(got.type));
}

}  // namespace tessera::wasm
