#include "server/module_dir.h"

#include <fstream>
#include <iterator>
#include <system_error>

namespace tessera::server {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxFiles = 64;
constexpr uintmax_t kMaxFileBytes = 1 << 20;

bool Wanted(const fs::path& rel, bool rust) {
  const std::string ext = rel.extension().string();
  if (rust) {
    if (rel == "Cargo.toml") return true;
    return ext == ".rs" && rel.begin() != rel.end() && *rel.begin() == "src";
  }
  return ext == ".cc" || ext == ".h";
}

}  // namespace

Result<compute::SourceFiles> ReadModuleDir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return NotFound(dir.string() + ": no such directory");
  }
  const bool rust = fs::exists(dir / "Cargo.toml", ec);
  compute::SourceFiles files;
  fs::recursive_directory_iterator it(dir, ec), end;
  if (ec) return IoError(dir.string() + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) return IoError(dir.string() + ": " + ec.message());
    const fs::path name = it->path().filename();
    if (it->is_directory(ec)) {
      if (name == "target" || name == ".tessera" ||
          name.string().starts_with(".")) {
        it.disable_recursion_pending();
      }
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    const fs::path rel = it->path().lexically_relative(dir);
    if (!Wanted(rel, rust)) continue;
    if (files.size() >= kMaxFiles) {
      return InvalidArgument(dir.string() + ": more than " +
                             std::to_string(kMaxFiles) + " source files");
    }
    if (it->file_size(ec) > kMaxFileBytes) {
      return InvalidArgument(it->path().string() + ": larger than 1 MiB");
    }
    std::ifstream in(it->path(), std::ios::binary);
    if (!in) return IoError(it->path().string() + ": cannot open");
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    if (in.bad()) return IoError(it->path().string() + ": read failed");
    files[rel.generic_string()] = std::move(text);
  }
  if (files.empty() || (rust && files.size() == 1)) {
    return InvalidArgument(
        dir.string() +
        ": no module sources (a Rust crate: Cargo.toml and src/lib.rs; C++: "
        "*.cc and *.h files)");
  }
  return files;
}

}  // namespace tessera::server
