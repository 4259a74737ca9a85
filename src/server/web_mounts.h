// Static folders served under URL prefixes: the app's web/ folder at "/",
// and more folders elsewhere (`tessera dev --mount /sdk=clients/ts/dist`,
// further apps' web/ folders at "/<app>/"). A request goes to the mount
// with the longest prefix that matches whole path segments; "/sdk" without
// the trailing slash redirects to "/sdk/" so relative links work.
//
// Thread-safety: immutable after construction; Serve from any thread.
#ifndef TESSERA_SERVER_WEB_MOUNTS_H_
#define TESSERA_SERVER_WEB_MOUNTS_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "net/http_types.h"
#include "server/static_files.h"

namespace tessera::server {

struct WebMount {
  std::string prefix;  // "/" or "/a/b" (no trailing slash)
  std::filesystem::path dir;
};

// Parses "PREFIX=DIR" (the --mount flag). The prefix starts with "/", has
// no empty, "." or ".." segments; a trailing "/" is dropped.
// Errors: kInvalidArgument saying what is wrong.
Result<WebMount> ParseWebMount(std::string_view spec);

class WebMounts {
 public:
  explicit WebMounts(std::vector<WebMount> mounts);

  // `path` is the request path without the query, still percent-encoded.
  // 404 when no mount matches.
  net::HttpResponse Serve(std::string_view path) const;

 private:
  std::vector<std::pair<std::string, StaticFiles>> mounts_;  // longest first
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_WEB_MOUNTS_H_
