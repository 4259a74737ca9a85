// The precompiled header of quick (development) guest builds: the C++ SDK
// and the standard headers shards use, parsed once so that a rebuild after
// an edit compiles only the shard's own code (app/builder.h, `quick`).
//
// The header is written to <dir>/sdk_pch.h and compiled to <dir>/sdk.pch
// with exactly the flags of the sources that will use it (clang refuses a
// PCH built with other flags). It is rebuilt when those flags change or a
// header it read is newer than it (its depfile), else reused.
#ifndef TESSERA_APP_GUEST_PCH_H_
#define TESSERA_APP_GUEST_PCH_H_

#include <filesystem>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::app {

// Ensures <dir>/sdk.pch is current for `flags` (the compiler flags of the
// sources, without -c/-o/-MMD) and returns its path: the standard headers
// shards commonly use plus `sdk_headers` (include paths such as
// "tessera/shard_sdk.h"). `cxx` is the compiler.
// Errors: kIo when the directory cannot be written or the compiler cannot
// run; kInvalidArgument with the compiler's output when the SDK does not
// compile.
Result<std::filesystem::path> EnsureGuestPch(
    const std::filesystem::path& dir, const std::string& cxx,
    const std::vector<std::string>& flags,
    const std::vector<std::string>& sdk_headers);

}  // namespace tessera::app

#endif  // TESSERA_APP_GUEST_PCH_H_
