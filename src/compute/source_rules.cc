// The deploy-time source rules of source_compiler.h (docs/compute-sources.md):
// limits and paths for every file, then the language's own rules (the
// Cargo.toml manifest and the Rust files; the C++ files and their
// includes), then the versions.
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <memory>

#include "common/text.h"
#include "compute/cargo_toml.h"
#include "compute/source_compiler.h"
#include "compute/source_scan.h"
#include "tessera/compute_abi.h"

namespace tessera::compute {
namespace {

constexpr size_t kMaxFiles = 32;
constexpr size_t kMaxFileBytes = 256 * 1024;
constexpr size_t kMaxTotalBytes = 1024 * 1024;
constexpr size_t kMaxPathBytes = 255;

constexpr std::array<std::string_view, 4> kAllowedCrates = {
    "tessera-compute-sdk", "serde", "serde_json", "rand"};
constexpr std::array<std::string_view, 5> kDependencyKeys = {
    "version", "features", "default-features", "default_features", "optional"};
constexpr std::array<std::string_view, 17> kPackageKeys = {
    "name",         "version",    "edition",       "rust-version", "authors",
    "description",  "license",    "publish",       "keywords",     "categories",
    "homepage",     "repository", "documentation", "metadata",     "autobins",
    "autoexamples", "autotests"};
constexpr std::array<std::string_view, 8> kLibKeys = {
    "name", "crate-type", "path", "test", "doctest", "bench", "doc", "harness"};

template <size_t N>
bool OneOf(const std::array<std::string_view, N>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

template <size_t N>
std::string Listed(const std::array<std::string_view, N>& list) {
  std::string out;
  for (std::string_view s : list) {
    out += (out.empty() ? "" : ", ") + std::string(s);
  }
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

// Relative, '/'-separated, no "." / ".." / empty / hidden parts, a plain
// character set.
Status CheckPath(const std::string& path) {
  if (path.empty()) return InvalidArgument("a file has an empty path");
  if (path.size() > kMaxPathBytes) {
    return InvalidArgument(path.substr(0, 40) + "...: path longer than " +
                           std::to_string(kMaxPathBytes) + " bytes");
  }
  if (path.find('\\') != std::string::npos) {
    return InvalidArgument(path + ": backslashes are not allowed in paths");
  }
  if (path[0] == '/') {
    return InvalidArgument(path + ": absolute paths are not allowed");
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string_view part(path.data() + start, end - start);
    if (part == "..") {
      return InvalidArgument(path + ": \"..\" is not allowed in paths");
    }
    if (part.empty() || part == ".") {
      return InvalidArgument(path + ": not a plain relative path");
    }
    if (part[0] == '.') {
      return InvalidArgument(path + ": hidden files are not allowed");
    }
    start = end + 1;
  }
  for (char c : path) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                    c == '.' || c == '/';
    if (!ok) {
      return InvalidArgument(path +
                             ": paths may use only letters, digits, '_', "
                             "'-', '.' and '/'");
    }
  }
  return Status::Ok();
}

Status CheckLimits(const SourceFiles& files) {
  if (files.empty()) return InvalidArgument("no files were uploaded");
  if (files.size() > kMaxFiles) {
    return InvalidArgument(std::to_string(files.size()) +
                           " files exceed the limit of " +
                           std::to_string(kMaxFiles) + " files");
  }
  size_t total = 0;
  for (const auto& [path, content] : files) {
    TESSERA_RETURN_IF_ERROR(CheckPath(path));
    if (content.size() > kMaxFileBytes) {
      return InvalidArgument(path + ": " + std::to_string(content.size()) +
                             " bytes exceed the limit of 256 KiB per file");
    }
    if (SafeUtf8(content, content.size()) != content) {
      return InvalidArgument(path + ": not UTF-8 text");
    }
    total += content.size();
  }
  if (total > kMaxTotalBytes) {
    return InvalidArgument(std::to_string(total) +
                           " bytes in all exceed the limit of 1 MiB");
  }
  return Status::Ok();
}

std::string Line(int line) { return "Cargo.toml:" + std::to_string(line); }

// One dependency: `name = "1.0"`, `name = { version = ..., features = ...}`
// or the [dependencies.name] table's entries.
Status CheckDependency(const std::string& name, int line,
                       const std::vector<TomlEntry>* keys) {
  if (!OneOf(kAllowedCrates, name)) {
    return InvalidArgument(
        Line(line) + ": dependency `" + name +
        "` is not allowed (allowed: " + Listed(kAllowedCrates) + ")");
  }
  if (keys == nullptr) return Status::Ok();
  for (const auto& [key, value] : *keys) {
    if (key == "path" || key == "git" || key == "branch" || key == "tag" ||
        key == "rev") {
      return InvalidArgument(Line(value.line) + ": dependency `" + name +
                             "`: " + key +
                             " dependencies are not allowed (only the "
                             "vendored registry)");
    }
    if (key == "registry" || key == "registry-index" || key == "package") {
      return InvalidArgument(Line(value.line) + ": dependency `" + name +
                             "`: the key `" + key + "` is not allowed");
    }
    if (!OneOf(kDependencyKeys, key)) {
      return InvalidArgument(Line(value.line) + ": dependency `" + name +
                             "`: unknown key `" + key +
                             "` (allowed: " + Listed(kDependencyKeys) + ")");
    }
  }
  return Status::Ok();
}

Status CheckCargoToml(const std::string& text) {
  Result<std::vector<TomlTable>> parsed = ParseCargoToml(text, "Cargo.toml");
  if (!parsed.ok()) return parsed.status();
  bool cdylib = false;
  for (const TomlTable& table : *parsed) {
    if (table.path.empty()) {
      if (!table.entries.empty()) {
        return InvalidArgument(Line(table.entries.front().second.line) +
                               ": key `" + table.entries.front().first +
                               "` outside a section");
      }
      continue;
    }
    std::string name;
    for (const std::string& p : table.path) {
      name += (name.empty() ? "" : ".") + p;
    }
    const std::string& section = table.path[0];
    if (section == "build-dependencies") {
      return InvalidArgument(Line(table.line) +
                             ": [build-dependencies] is not allowed (no "
                             "build-time code)");
    }
    const bool allowed =
        !table.array &&
        ((table.path.size() == 1 && (section == "package" || section == "lib" ||
                                     section == "dependencies")) ||
         (table.path.size() == 2 && section == "dependencies"));
    if (!allowed) {
      return InvalidArgument(
          Line(table.line) + ": section " +
          (table.array ? "[[" + name + "]]" : "[" + name + "]") +
          " is not allowed (only [package], [lib] and "
          "[dependencies])");
    }
    if (section == "package") {
      for (const auto& [key, value] : table.entries) {
        if (key == "build") {
          return InvalidArgument(Line(value.line) +
                                 ": [package] build is not allowed (no "
                                 "build scripts)");
        }
        if (!OneOf(kPackageKeys, key)) {
          return InvalidArgument(
              Line(value.line) + ": [package] key `" + key +
              "` is not allowed (allowed: " + Listed(kPackageKeys) + ")");
        }
      }
    } else if (section == "lib") {
      for (const auto& [key, value] : table.entries) {
        if (!OneOf(kLibKeys, key)) {
          return InvalidArgument(
              Line(value.line) + ": [lib] key `" + key +
              "` is not allowed (allowed: " + Listed(kLibKeys) + ")");
        }
        if (key == "path" && (value.kind != TomlValue::Kind::kString ||
                              value.str != "src/lib.rs")) {
          return InvalidArgument(Line(value.line) +
                                 ": [lib] path must be \"src/lib.rs\"");
        }
        if (key == "crate-type") {
          if (value.kind != TomlValue::Kind::kArray ||
              value.array.size() != 1 ||
              value.array[0].kind != TomlValue::Kind::kString ||
              value.array[0].str != "cdylib") {
            return InvalidArgument(Line(value.line) +
                                   ": [lib] crate-type must be [\"cdylib\"]");
          }
          cdylib = true;
        }
      }
    } else if (table.path.size() == 2) {
      TESSERA_RETURN_IF_ERROR(
          CheckDependency(table.path[1], table.line, &table.entries));
    } else {
      for (const auto& [key, value] : table.entries) {
        if (value.kind == TomlValue::Kind::kString) {
          TESSERA_RETURN_IF_ERROR(CheckDependency(key, value.line, nullptr));
        } else if (value.kind == TomlValue::Kind::kTable) {
          TESSERA_RETURN_IF_ERROR(
              CheckDependency(key, value.line, &value.table));
        } else {
          return InvalidArgument(Line(value.line) + ": dependency `" + key +
                                 "` must be a version string or an inline "
                                 "table");
        }
      }
    }
  }
  if (!cdylib) {
    return InvalidArgument(
        "Cargo.toml: [lib] crate-type = [\"cdylib\"] is required");
  }
  return Status::Ok();
}

Status CheckRust(const SourceFiles& files) {
  for (const auto& [path, content] : files) {
    const size_t slash = path.rfind('/');
    const std::string base =
        slash == std::string::npos ? path : path.substr(slash + 1);
    if (base == "build.rs") {
      return InvalidArgument(path +
                             ": build.rs is not allowed (no build scripts)");
    }
    if (base == "Cargo.lock") {
      return InvalidArgument(path +
                             ": do not upload a Cargo.lock (dependencies "
                             "resolve against the vendored registry)");
    }
    if (path == "Cargo.toml") continue;
    if (path.rfind("src/", 0) != 0 || !EndsWith(path, ".rs")) {
      return InvalidArgument(path +
                             ": only Cargo.toml and src/**.rs files are "
                             "allowed in a Rust module");
    }
  }
  if (files.count("Cargo.toml") == 0) {
    return InvalidArgument("Cargo.toml is required");
  }
  if (files.count("src/lib.rs") == 0) {
    return InvalidArgument("src/lib.rs is required");
  }
  TESSERA_RETURN_IF_ERROR(CheckCargoToml(files.at("Cargo.toml")));
  for (const auto& [path, content] : files) {
    if (path != "Cargo.toml") {
      TESSERA_RETURN_IF_ERROR(CheckRustSource(path, content));
    }
  }
  return Status::Ok();
}

Status CheckCpp(const SourceFiles& files) {
  bool has_cc = false;
  for (const auto& [path, content] : files) {
    const bool cc = EndsWith(path, ".cc");
    if (!cc && !EndsWith(path, ".h")) {
      return InvalidArgument(path +
                             ": only .cc and .h files are allowed in a C++ "
                             "module");
    }
    if (cc && path.find('/') != std::string::npos) {
      return InvalidArgument(path +
                             ": .cc files must be at the top level (headers "
                             "may be in directories)");
    }
    has_cc = has_cc || cc;
  }
  if (!has_cc) {
    return InvalidArgument("a C++ module needs at least one .cc file");
  }
  for (const auto& [path, content] : files) {
    TESSERA_RETURN_IF_ERROR(CheckCppSource(path, content, files));
  }
  return Status::Ok();
}

// "MAJOR.MINOR.PATCH", each decimal without leading zeros.
bool ParseSemver(std::string_view s, std::array<uint64_t, 3>* out) {
  for (size_t i = 0; i < 3; ++i) {
    const size_t dot = i < 2 ? s.find('.') : s.size();
    if (dot == std::string_view::npos || dot == 0) return false;
    const std::string_view part = s.substr(0, dot);
    if (part.size() > 1 && part[0] == '0') return false;
    auto [end, ec] =
        std::from_chars(part.data(), part.data() + part.size(), (*out)[i]);
    if (ec != std::errc() || end != part.data() + part.size()) return false;
    s = i < 2 ? s.substr(dot + 1) : std::string_view();
  }
  return true;
}

Status CheckVersions(std::string_view sdk_version, int abi_version) {
  std::array<uint64_t, 3> v{}, oldest{}, newest{};
  ParseSemver(compute_abi::kOldestSdkVersion, &oldest);
  ParseSemver(compute_abi::kSdkVersion, &newest);
  const std::string range = std::string(compute_abi::kOldestSdkVersion) +
                            " - " + compute_abi::kSdkVersion;
  if (!ParseSemver(sdk_version, &v)) {
    return InvalidArgument("sdkVersion \"" + SafeUtf8(sdk_version, 40) +
                           "\" is not a version (MAJOR.MINOR.PATCH); "
                           "supported: " +
                           range);
  }
  if (v < oldest || v > newest) {
    return InvalidArgument("sdkVersion " + std::string(sdk_version) +
                           " is not supported (supported: " + range + ")");
  }
  if (abi_version != compute_abi::kAbiVersion) {
    return InvalidArgument("abiVersion " + std::to_string(abi_version) +
                           " is not supported (supported: " +
                           std::to_string(compute_abi::kAbiVersion) + ")");
  }
  return Status::Ok();
}

}  // namespace

Status CheckSources(Language language, const SourceFiles& files,
                    std::string_view sdk_version, int abi_version) {
  TESSERA_RETURN_IF_ERROR(CheckLimits(files));
  TESSERA_RETURN_IF_ERROR(language == Language::kRust ? CheckRust(files)
                                                      : CheckCpp(files));
  return CheckVersions(sdk_version, abi_version);
}

bool IsValidModuleName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  if (!(name[0] >= 'a' && name[0] <= 'z')) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '_')) {
      return false;
    }
  }
  return true;
}

Language DetectLanguage(const SourceFiles& files) {
  return files.count("Cargo.toml") != 0 ? Language::kRust : Language::kCpp;
}

std::string SourceHash(Language language, std::string_view sdk_version,
                       const SourceFiles& files) {
  // Each part length-prefixed, so no two different maps hash alike.
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                              &EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  const auto add = [&](std::string_view part) {
    const std::string len = std::to_string(part.size()) + ":";
    EVP_DigestUpdate(ctx.get(), len.data(), len.size());
    EVP_DigestUpdate(ctx.get(), part.data(), part.size());
  };
  add("tessera-compute-source-1");
  add(LanguageName(language));
  add(sdk_version);
  for (const auto& [path, content] : files) {
    add(path);
    add(content);
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

}  // namespace tessera::compute
