// Where an input log's segment files live (input_log.h): a small file
// interface, on disk (DiskLogFiles, one directory per shard) or in memory
// (MemoryLogFiles, for tests: it can also cut a file short, as a crash in
// the middle of a write would).
//
// Threading: one thread at a time per object.
#ifndef TESSERA_SHARD_INPUT_LOG_FILES_H_
#define TESSERA_SHARD_INPUT_LOG_FILES_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::shard {

class LogFiles {
 public:
  virtual ~LogFiles() = default;
  // The files' names, ascending. An absent directory has none.
  virtual Result<std::vector<std::string>> List() = 0;
  virtual Result<uint64_t> Size(const std::string& name) = 0;
  virtual Result<std::string> Read(const std::string& name) = 0;
  // Appends to `name`, creating it when absent.
  virtual Status Append(const std::string& name, std::string_view bytes) = 0;
  // Makes what was appended to `name` (and its creation) durable.
  virtual Status Sync(const std::string& name) = 0;
  virtual Status Remove(const std::string& name) = 0;
};

class DiskLogFiles final : public LogFiles {
 public:
  // Files under `dir`, created (with its parents) at the first Append.
  explicit DiskLogFiles(std::filesystem::path dir) : dir_(std::move(dir)) {}
  ~DiskLogFiles() override;

  Result<std::vector<std::string>> List() override;
  Result<uint64_t> Size(const std::string& name) override;
  Result<std::string> Read(const std::string& name) override;
  Status Append(const std::string& name, std::string_view bytes) override;
  Status Sync(const std::string& name) override;
  Status Remove(const std::string& name) override;

 private:
  Status OpenForAppend(const std::string& name);
  void Close();

  const std::filesystem::path dir_;
  std::string open_name_;  // the file `fd_` appends to
  int fd_ = -1;
  bool dir_dirty_ = false;  // a file was created since the last Sync
};

class MemoryLogFiles final : public LogFiles {
 public:
  Result<std::vector<std::string>> List() override;
  Result<uint64_t> Size(const std::string& name) override;
  Result<std::string> Read(const std::string& name) override;
  Status Append(const std::string& name, std::string_view bytes) override;
  Status Sync(const std::string& name) override;
  Status Remove(const std::string& name) override;

  // Test helpers: the bytes of each file, and the Sync calls so far.
  std::map<std::string, std::string>& files() { return files_; }
  int syncs() const { return syncs_; }

 private:
  std::map<std::string, std::string> files_;
  int syncs_ = 0;
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_INPUT_LOG_FILES_H_
