// Serves an app's `web/` folder: GET /x/y reads <root>/x/y, a directory
// (and "/") serves its index.html, the content type follows the extension.
// Refuses anything that would leave the root (".." segments, symlinks
// pointing outside), answering 404 like a missing file.
//
// Thread-safety: immutable after construction; Serve from any thread.
#ifndef TESSERA_SERVER_STATIC_FILES_H_
#define TESSERA_SERVER_STATIC_FILES_H_

#include <cstddef>
#include <filesystem>
#include <string_view>

#include "net/http_types.h"

namespace tessera::server {

class StaticFiles {
 public:
  // `root` may not exist (then every request is a 404).
  explicit StaticFiles(std::filesystem::path root,
                       size_t max_file_bytes = 32 << 20);

  // `path` is the request path without the query, still percent-encoded.
  net::HttpResponse Serve(std::string_view path) const;

  // "text/html; charset=utf-8" etc.; application/octet-stream if unknown.
  static const char* ContentTypeFor(const std::filesystem::path& file);

 private:
  std::filesystem::path root_;  // canonical, or empty when missing
  size_t max_file_bytes_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_STATIC_FILES_H_
