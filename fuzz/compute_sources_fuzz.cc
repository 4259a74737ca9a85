// libFuzzer target: the deploy-time source rules of compute modules
// (src/compute/source_rules.cc and what it calls) on arbitrary bytes. The
// first byte picks how the rest is read:
//   0: a Cargo.toml beside a fixed src/lib.rs (the strict TOML reader and
//      the manifest rules);
//   1: a file map, "path\0content\0path\0content..." (limits, paths, both
//      languages' rules);
//   2: one source file, as main.cc of a C++ module and as src/lib.rs of a
//      Rust one (the include and macro scans).
// Besides not crashing, whatever is accepted must keep the rules'
// promises: plain relative paths, the required files, and a hash that
// depends on the content.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "compute/cargo_toml.h"
#include "compute/source_compiler.h"
#include "tessera/compute_abi.h"

namespace {

using namespace tessera::compute;

constexpr char kCargo[] =
    "[package]\nname = \"m\"\nversion = \"0.1.0\"\n[lib]\n"
    "crate-type = [\"cdylib\"]\n[dependencies]\n"
    "tessera-compute-sdk = \"0.1.0\"\n";

void Check(bool ok) {
  if (!ok) std::abort();
}

// The promises of an accepted file map.
void CheckAccepted(Language language, const SourceFiles& files) {
  Check(!files.empty() && files.size() <= 32);
  size_t total = 0;
  for (const auto& [path, content] : files) {
    // Relative, no empty, ".", ".." or hidden parts, no backslashes.
    Check(!path.empty() && path[0] != '/' && path.back() != '/');
    Check(path.find('\\') == std::string::npos);
    Check(path[0] != '.' && path.find("/.") == std::string::npos);
    Check(path.find("//") == std::string::npos);
    Check(content.size() <= 256 * 1024);
    total += content.size();
  }
  Check(total <= 1024 * 1024);
  if (language == Language::kRust) {
    Check(files.count("Cargo.toml") == 1 && files.count("src/lib.rs") == 1);
    Check(files.count("build.rs") == 0 && files.count("Cargo.lock") == 0);
  } else {
    bool cc = false;
    for (const auto& [path, content] : files) {
      cc = cc || path.ends_with(".cc");
    }
    Check(cc);
  }
  SourceFiles changed = files;
  changed.begin()->second += "x";
  Check(SourceHash(language, "0.1.0", files) !=
        SourceHash(language, "0.1.0", changed));
}

void Run(Language language, const SourceFiles& files) {
  const tessera::Status s =
      CheckSources(language, files, tessera::compute_abi::kSdkVersion,
                   tessera::compute_abi::kAbiVersion);
  if (s.ok()) {
    CheckAccepted(language, files);
  } else {
    Check(s.code() == tessera::StatusCode::kInvalidArgument);
    Check(!s.message().empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  switch (data[0] % 3) {
    case 0: {
      (void)ParseCargoToml(rest, "Cargo.toml");
      Run(Language::kRust,
          {{"Cargo.toml", std::string(rest)}, {"src/lib.rs", "fn f() {}\n"}});
      break;
    }
    case 1: {
      SourceFiles files;
      size_t at = 0;
      while (at < rest.size()) {
        size_t nul = rest.find('\0', at);
        if (nul == std::string_view::npos) nul = rest.size();
        const std::string path(rest.substr(at, nul - at));
        at = nul + 1;
        size_t end = at < rest.size() ? rest.find('\0', at) : rest.size();
        if (end == std::string_view::npos) end = rest.size();
        files[path] = at < rest.size() ? std::string(rest.substr(at, end - at))
                                       : std::string();
        at = end + 1;
      }
      Run(Language::kRust, files);
      Run(Language::kCpp, files);
      Run(DetectLanguage(files), files);
      break;
    }
    default: {
      Run(Language::kCpp, {{"main.cc", std::string(rest)}, {"a.h", ""}});
      Run(Language::kRust,
          {{"Cargo.toml", kCargo}, {"src/lib.rs", std::string(rest)}});
      break;
    }
  }
  return 0;
}
