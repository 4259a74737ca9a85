// `tessera dev`'s hot reload trigger: watches each built kind's source
// directory and calls `changed(kind)` once its files changed and then
// stayed the same for one more poll (an editor's save of several files is
// one change). A directory's fingerprint is the names, sizes and
// modification times of its files, recursively, skipping `target/` and
// hidden entries (a crate's build output, editors' swap files).
//
// Threading: polls on a thread of its own; `changed` runs there.
#ifndef TESSERA_SERVER_SOURCE_WATCHER_H_
#define TESSERA_SERVER_SOURCE_WATCHER_H_

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "common/thread_annotations.h"

namespace tessera::server {

// The fingerprint of `dir` (see the file comment); 0 when it cannot be
// read.
uint64_t DirectoryFingerprint(const std::filesystem::path& dir);

class SourceWatcher {
 public:
  SourceWatcher(std::map<std::string, std::filesystem::path> dirs,
                std::function<void(const std::string& kind)> changed,
                int64_t poll_ms = 50);
  // Stops the thread (after a `changed` call in progress).
  ~SourceWatcher();
  SourceWatcher(const SourceWatcher&) = delete;
  SourceWatcher& operator=(const SourceWatcher&) = delete;

 private:
  void Loop();

  const std::map<std::string, std::filesystem::path> dirs_;
  const std::function<void(const std::string&)> changed_;
  const int64_t poll_ms_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_SOURCE_WATCHER_H_
