#include "server/static_files.h"

#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <system_error>

#include "server/http_json.h"
#include "server/request_target.h"

namespace tessera::server {
namespace fs = std::filesystem;

namespace {

net::HttpResponse NotFoundResponse(std::string_view path) {
  return ErrorResponse(404, "not_found", "no such file: " + std::string(path));
}

bool IsWithin(const fs::path& root, const fs::path& candidate) {
  auto r = root.begin();
  auto c = candidate.begin();
  for (; r != root.end(); ++r, ++c) {
    if (c == candidate.end() || *r != *c) return false;
  }
  return true;
}

}  // namespace

StaticFiles::StaticFiles(fs::path root, size_t max_file_bytes)
    : max_file_bytes_(max_file_bytes) {
  std::error_code ec;
  fs::path canonical = fs::canonical(root, ec);
  if (!ec && fs::is_directory(canonical, ec)) root_ = std::move(canonical);
}

const char* StaticFiles::ContentTypeFor(const fs::path& file) {
  static const std::map<std::string, const char*> kTypes = {
      {".html", "text/html; charset=utf-8"},
      {".htm", "text/html; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".txt", "text/plain; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},
      {".webp", "image/webp"},
      {".ico", "image/x-icon"},
      {".wasm", "application/wasm"},
      {".woff", "font/woff"},
      {".woff2", "font/woff2"},
      {".mp3", "audio/mpeg"},
      {".ogg", "audio/ogg"},
      {".wav", "audio/wav"},
  };
  std::string ext = file.extension().string();
  for (char& c : ext) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  auto it = kTypes.find(ext);
  return it == kTypes.end() ? "application/octet-stream" : it->second;
}

net::HttpResponse StaticFiles::Serve(std::string_view path) const {
  if (root_.empty()) return NotFoundResponse(path);
  std::optional<RequestTarget> target = ParseTarget(path);
  if (!target) return NotFoundResponse(path);
  fs::path file = root_;
  for (const std::string& segment : target->segments) {
    // Decoded segments may hide "..", "/" or "\" (%2e%2e, %2f).
    if (segment == "." || segment == ".." ||
        segment.find_first_of("/\\") != std::string::npos) {
      return NotFoundResponse(path);
    }
    file /= segment;
  }
  std::error_code ec;
  if (fs::is_directory(file, ec)) file /= "index.html";
  // Resolve symlinks and make sure the result is still under the root.
  fs::path resolved = fs::canonical(file, ec);
  if (ec || !IsWithin(root_, resolved) || !fs::is_regular_file(resolved, ec)) {
    return NotFoundResponse(path);
  }
  const uintmax_t size = fs::file_size(resolved, ec);
  if (ec) return NotFoundResponse(path);
  if (size > max_file_bytes_) {
    return ErrorResponse(413, "too_large",
                         "the file is larger than the static file limit");
  }
  std::ifstream in(resolved, std::ios::binary);
  if (!in) return NotFoundResponse(path);
  net::HttpResponse response;
  response.status = 200;
  response.content_type = ContentTypeFor(resolved);
  response.body.assign(std::istreambuf_iterator<char>(in),
                       std::istreambuf_iterator<char>());
  if (in.bad()) {
    return ErrorResponse(500, "io", "cannot read " + std::string(path));
  }
  response.headers.emplace_back("Cache-Control", "no-cache");
  return response;
}

}  // namespace tessera::server
