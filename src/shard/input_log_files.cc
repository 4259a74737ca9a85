#include "shard/input_log_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

namespace tessera::shard {
namespace {

namespace fs = std::filesystem;

Status Errno(const std::string& what, const fs::path& path) {
  return IoError(what + " " + path.string() + ": " + std::strerror(errno));
}

Status SyncDir(const fs::path& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open directory", dir);
  const bool ok = fsync(fd) == 0;
  const Status error = ok ? Status::Ok() : Errno("cannot sync directory", dir);
  close(fd);
  return error;
}

}  // namespace

DiskLogFiles::~DiskLogFiles() { Close(); }

void DiskLogFiles::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  open_name_.clear();
}

Result<std::vector<std::string>> DiskLogFiles::List() {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::exists(dir_, ec)) return names;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_regular_file(ec)) names.push_back(it->path().filename());
  }
  if (ec) return IoError("cannot list " + dir_.string() + ": " + ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

Result<uint64_t> DiskLogFiles::Size(const std::string& name) {
  std::error_code ec;
  const uint64_t size = fs::file_size(dir_ / name, ec);
  if (ec) {
    return IoError("cannot stat " + (dir_ / name).string() + ": " +
                   ec.message());
  }
  return size;
}

Result<std::string> DiskLogFiles::Read(const std::string& name) {
  std::ifstream in(dir_ / name, std::ios::binary);
  if (!in) return IoError("cannot read " + (dir_ / name).string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

Status DiskLogFiles::OpenForAppend(const std::string& name) {
  if (fd_ >= 0 && open_name_ == name) return Status::Ok();
  Close();
  std::error_code ec;
  if (!fs::exists(dir_, ec)) {
    fs::create_directories(dir_, ec);
    if (ec) {
      return IoError("cannot create " + dir_.string() + ": " + ec.message());
    }
    // The new directory's own entry.
    TESSERA_RETURN_IF_ERROR(SyncDir(dir_.parent_path()));
  }
  const fs::path path = dir_ / name;
  const bool existed = fs::exists(path, ec);
  fd_ = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return Errno("cannot open", path);
  open_name_ = name;
  if (!existed) dir_dirty_ = true;
  return Status::Ok();
}

Status DiskLogFiles::Append(const std::string& name, std::string_view bytes) {
  TESSERA_RETURN_IF_ERROR(OpenForAppend(name));
  while (!bytes.empty()) {
    const ssize_t n = write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", dir_ / name);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status DiskLogFiles::Sync(const std::string& name) {
  TESSERA_RETURN_IF_ERROR(OpenForAppend(name));
  if (fdatasync(fd_) != 0) return Errno("cannot sync", dir_ / name);
  if (dir_dirty_) {
    TESSERA_RETURN_IF_ERROR(SyncDir(dir_));
    dir_dirty_ = false;
  }
  return Status::Ok();
}

Status DiskLogFiles::Remove(const std::string& name) {
  if (open_name_ == name) Close();
  std::error_code ec;
  fs::remove(dir_ / name, ec);
  if (ec) {
    return IoError("cannot remove " + (dir_ / name).string() + ": " +
                   ec.message());
  }
  return Status::Ok();
}

Result<std::vector<std::string>> MemoryLogFiles::List() {
  std::vector<std::string> names;
  for (const auto& [name, bytes] : files_) names.push_back(name);
  return names;
}

Result<uint64_t> MemoryLogFiles::Size(const std::string& name) {
  auto it = files_.find(name);
  if (it == files_.end()) return NotFound("no file " + name);
  return it->second.size();
}

Result<std::string> MemoryLogFiles::Read(const std::string& name) {
  auto it = files_.find(name);
  if (it == files_.end()) return NotFound("no file " + name);
  return it->second;
}

Status MemoryLogFiles::Append(const std::string& name, std::string_view bytes) {
  files_[name].append(bytes);
  return Status::Ok();
}

Status MemoryLogFiles::Sync(const std::string&) {
  ++syncs_;
  return Status::Ok();
}

Status MemoryLogFiles::Remove(const std::string& name) {
  files_.erase(name);
  return Status::Ok();
}

}  // namespace tessera::shard
