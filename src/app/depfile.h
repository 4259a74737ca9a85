// Make-style depfiles, as clang's -MMD writes them.
#ifndef TESSERA_APP_DEPFILE_H_
#define TESSERA_APP_DEPFILE_H_

#include <filesystem>
#include <vector>

namespace tessera::app {

// Appends the prerequisites listed in `file` to `deps`. Returns false if
// the file cannot be read or names no target.
bool ReadDepfile(const std::filesystem::path& file,
                 std::vector<std::filesystem::path>* deps);

// Whether `target` exists and is newer than each of `inputs`, and than
// every prerequisite each of `depfiles` lists (false if one is unreadable).
bool NewerThanInputs(const std::filesystem::path& target,
                     std::vector<std::filesystem::path> inputs,
                     const std::vector<std::filesystem::path>& depfiles);

}  // namespace tessera::app

#endif  // TESSERA_APP_DEPFILE_H_
