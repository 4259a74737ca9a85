#include "server/web_mounts.h"

#include <algorithm>

#include "server/http_json.h"

namespace tessera::server {

Result<WebMount> ParseWebMount(std::string_view spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos) {
    return InvalidArgument(
        "--mount \"" + std::string(spec) +
        "\": expected PREFIX=DIR, e.g. /sdk=clients/ts/dist");
  }
  std::string prefix(spec.substr(0, eq));
  const std::string dir(spec.substr(eq + 1));
  if (prefix.empty() || prefix[0] != '/') {
    return InvalidArgument("--mount \"" + std::string(spec) +
                           "\": the prefix must start with \"/\"");
  }
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  if (dir.empty()) {
    return InvalidArgument("--mount \"" + std::string(spec) +
                           "\": the directory is empty");
  }
  if (prefix != "/") {
    size_t start = 1;
    while (start <= prefix.size()) {
      size_t end = prefix.find('/', start);
      if (end == std::string::npos) end = prefix.size();
      const std::string_view segment =
          std::string_view(prefix).substr(start, end - start);
      if (segment.empty() || segment == "." || segment == "..") {
        return InvalidArgument("--mount \"" + std::string(spec) +
                               "\": the prefix has an empty, \".\" or \"..\" "
                               "segment");
      }
      start = end + 1;
    }
  }
  return WebMount{std::move(prefix), dir};
}

WebMounts::WebMounts(std::vector<WebMount> mounts) {
  std::stable_sort(mounts.begin(), mounts.end(),
                   [](const WebMount& a, const WebMount& b) {
                     return a.prefix.size() > b.prefix.size();
                   });
  for (WebMount& m : mounts) {
    mounts_.emplace_back(std::move(m.prefix), StaticFiles(std::move(m.dir)));
  }
}

net::HttpResponse WebMounts::Serve(std::string_view path) const {
  for (const auto& [prefix, files] : mounts_) {
    if (prefix == "/") return files.Serve(path);
    if (!path.starts_with(prefix)) continue;
    const std::string_view rest = path.substr(prefix.size());
    if (rest.empty()) {
      net::HttpResponse redirect;
      redirect.status = 301;
      redirect.content_type = "text/plain; charset=utf-8";
      redirect.headers.emplace_back("Location", prefix + "/");
      redirect.body = "moved to " + prefix + "/\n";
      return redirect;
    }
    if (rest[0] != '/') continue;  // "/sdkx" is not under "/sdk"
    return files.Serve(rest);
  }
  return ErrorResponse(404, "not_found", "no such file: " + std::string(path));
}

}  // namespace tessera::server
