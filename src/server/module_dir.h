// A compute module's sources read from a directory, as a deploy's file map
// (the manifest's compute modules at boot, `tessera compute deploy DIR`):
// a Rust crate (Cargo.toml and src/**.rs) or C++ sources (*.cc and *.h,
// in the directory and below). Build outputs (target/, .tessera/) and
// other files are skipped; the source rules (compute::CheckSources) are
// the engine's to apply.
#ifndef TESSERA_SERVER_MODULE_DIR_H_
#define TESSERA_SERVER_MODULE_DIR_H_

#include <filesystem>

#include "common/status.h"
#include "compute/source_compiler.h"

namespace tessera::server {

// Errors: kNotFound (no such directory), kInvalidArgument (no module
// sources there; more than 64 files or a file above 1 MiB: the deploy
// would be refused anyway), kIo.
Result<compute::SourceFiles> ReadModuleDir(const std::filesystem::path& dir);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_MODULE_DIR_H_
