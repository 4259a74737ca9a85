// The opcodes of the binary patch form (docs/realms.md "Patches"), shared
// by patch_codec.cc and patch_decode.cc. Internal to tessera_realm.
#ifndef TESSERA_REALM_PATCH_OPCODES_H_
#define TESSERA_REALM_PATCH_OPCODES_H_

#include <cstdint>

namespace tessera::realm {

enum Opcode : uint8_t { kOpSet = 0, kOpDelete = 1, kOpAppend = 2 };

}  // namespace tessera::realm

#endif  // TESSERA_REALM_PATCH_OPCODES_H_
