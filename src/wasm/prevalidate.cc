#include "wasm/prevalidate.h"

#include <wabt/binary-reader.h>
#include <wabt/interp/binary-reader-interp.h>
#include <wabt/interp/interp.h>

#include <string>

namespace tessera::wasm {
namespace {

// An unsigned LEB128 of at most 5 bytes at data[*pos]; false if cut short
// or too long (wabt reports those itself).
bool ReadU32(const uint8_t* data, size_t size, size_t* pos, uint64_t* out) {
  uint64_t value = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (*pos >= size) return false;
    const uint8_t byte = data[(*pos)++];
    value |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) {
      *out = value;
      return true;
    }
  }
  return false;
}

// wabt's readers reserve memory for a section's declared count before
// reading its items, so a count of billions in a few bytes makes them
// allocate gigabytes (found by fuzz/module_loader_fuzz). Every item takes
// at least one byte of its section, and a data segment at least one byte
// of the module, so larger counts are refused here first. Layout errors
// are left to wabt.
bool CountsFit(const uint8_t* data, size_t size, wabt::Errors* errors) {
  size_t pos = 8;  // magic and version
  while (pos < size) {
    const uint8_t id = data[pos++];
    uint64_t length = 0;
    if (!ReadU32(data, size, &pos, &length) || length > size - pos) {
      return true;
    }
    const size_t end = pos + static_cast<size_t>(length);
    uint64_t count = 0;
    size_t at = pos;
    const bool vector = id >= 1 && id <= 11 && id != 8;  // 8: start
    if ((vector || id == 12) && ReadU32(data, end, &at, &count)) {
      const uint64_t room = id == 12 ? size : end - at;
      if (count > room) {
        errors->emplace_back(wabt::ErrorLevel::Error, wabt::Location(),
                             "section " + std::to_string(id) + " declares " +
                                 std::to_string(count) + " items in " +
                                 std::to_string(room) + " bytes");
        return false;
      }
    }
    pos = end;
  }
  return true;
}

}  // namespace

bool PreValidate(const uint8_t* data, size_t size,
                 const wabt::Features& features, wabt::Errors* errors) {
  if (!CountsFit(data, size, errors)) return false;
  wabt::ReadBinaryOptions options(features, nullptr, false, true, false);
  wabt::interp::ModuleDesc desc;
  return wabt::Succeeded(wabt::interp::ReadBinaryInterp(
      "module.wasm", data, size, options, errors, &desc));
}

}  // namespace tessera::wasm
