#include "wasm/prevalidate.h"

#include <wabt/binary-reader.h>
#include <wabt/interp/binary-reader-interp.h>
#include <wabt/interp/interp.h>

namespace tessera::wasm {

bool PreValidate(const uint8_t* data, size_t size,
                 const wabt::Features& features, wabt::Errors* errors) {
  wabt::ReadBinaryOptions options(features, nullptr, false, true, false);
  wabt::interp::ModuleDesc desc;
  return wabt::Succeeded(wabt::interp::ReadBinaryInterp(
      "module.wasm", data, size, options, errors, &desc));
}

}  // namespace tessera::wasm
