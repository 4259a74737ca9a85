#include "exceptions.h"

namespace tessera::spec {
namespace {

struct Exception {
  const char* script;
  int line;
  const char* reason;
};

// Keep in step with docs/guest-abi.md, "Conformance exceptions".
constexpr char kMultiMemory[] =
    "multi-memory: the module declares or imports more than one memory, "
    "which tessera refuses (wasm2c 1.0.32 writes the data segments of "
    "memory 1 and up into memory 0)";
constexpr char kNeedsMultiMemory[] =
    "depends on an earlier module of the script that has several memories "
    "(refused, see multi-memory)";
constexpr char kExtendedConst[] =
    "extended constant expressions (i32.add/sub/mul in a data offset): "
    "wasm2c 1.0.32 cannot compile them, so the loader leaves the feature "
    "off and rejects the module as invalid";
constexpr char kNonImportedGlobal[] =
    "a data offset reads a global the module itself defines, valid since "
    "the spec relaxed constant expressions; wabt 1.0.32's reader and "
    "validator still reject it (\"initializer expression can only reference "
    "an imported global\")";

const Exception kExceptions[] = {
    {"data.wast", 89, kNonImportedGlobal},
    {"data.wast", 90, kNonImportedGlobal},
    {"data.wast", 178, kExtendedConst},
    {"data.wast", 183, kExtendedConst},
    {"data.wast", 188, kExtendedConst},
    {"data.wast", 195, kExtendedConst},
    {"exports0.wast", 5, kMultiMemory},
    {"exports0.wast", 6, kMultiMemory},
    {"exports0.wast", 32, kMultiMemory},
    {"exports0.wast", 40, kMultiMemory},
    {"imports0.wast", 1, kMultiMemory},
    {"imports0.wast", 18, kNeedsMultiMemory},
    {"imports0.wast", 21, kNeedsMultiMemory},
    {"imports0.wast", 25, kNeedsMultiMemory},
    {"imports0.wast", 30, kNeedsMultiMemory},
    {"imports0.wast", 34, kNeedsMultiMemory},
    {"imports0.wast", 39, kNeedsMultiMemory},
    {"imports0.wast", 43, kNeedsMultiMemory},
    {"linking0.wast", 17, kMultiMemory},
    {"linking0.wast", 31, kMultiMemory},
    {"linking0.wast", 42, kNeedsMultiMemory},
};

}  // namespace

const char* FindException(const std::string& script, int line) {
  for (const Exception& e : kExceptions) {
    if (e.reason && script == e.script && line == e.line) return e.reason;
  }
  return nullptr;
}

}  // namespace tessera::spec
