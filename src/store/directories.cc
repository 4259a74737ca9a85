#include "store/directories.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

namespace tessera::store {
namespace {

namespace fs = std::filesystem;

Status SyncDirectory(const fs::path& dir, const std::string& file_path) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fsync(fd) != 0) {
    std::string error = std::strerror(errno);
    if (fd >= 0) close(fd);
    return IoError("cannot sync directory " + dir.string() + " for store " +
                   file_path + ": " + error);
  }
  close(fd);
  return Status::Ok();
}

}  // namespace

Status CreateParentDirectories(const std::string& file_path) {
  fs::path parent = fs::path(file_path).parent_path();
  if (parent.empty()) return Status::Ok();

  // The missing directories, deepest first.
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = parent; !p.empty() && !fs::exists(p, ec);
       p = p.parent_path()) {
    if (ec) break;
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  if (missing.empty()) return Status::Ok();

  fs::create_directories(parent, ec);
  if (ec) {
    return IoError("cannot create directory " + parent.string() +
                   " for store " + file_path + ": " + ec.message());
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    fs::path above = it->parent_path();
    TESSERA_RETURN_IF_ERROR(
        SyncDirectory(above.empty() ? fs::path(".") : above, file_path));
  }
  return Status::Ok();
}

}  // namespace tessera::store
