// MakeToolchainCompiler (source_compiler.h): a version's files written to
// <work_dir>/src/<hash>/ and built by the app builder's recipes: C++ with
// app/builder.h as a one-kind app rooted at <work_dir>/cpp, Rust with
// app/crate_builder.h (BuildCrate) in <work_dir>/rust, whose cargo home and
// target directory every Rust version shares (dependencies compile once).
// The module is published at <work_dir>/artifacts/<hash>.wasm (the builders
// link or copy to a temporary file and rename it), then checked against the
// compute ABI.
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

#include "app/builder.h"
#include "app/crate_builder.h"
#include "app/manifest.h"
#include "compute/module_instance.h"
#include "compute/source_compiler.h"
#include "tessera/compute_abi.h"
#include "wasm/loader.h"

namespace tessera::compute {
namespace {

namespace fs = std::filesystem;

// The memory cap of the structural check after a compile; the policy's
// maxMemoryMb applies when the module loads.
constexpr uint32_t kCheckMemoryMb = 4096;

bool IsHexHash(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Every occurrence of `from` in `text` replaced by `to`.
void ReplaceAll(std::string* text, const std::string& from,
                const std::string& to) {
  if (from.empty()) return;
  for (size_t at = 0; (at = text->find(from, at)) != std::string::npos;) {
    text->replace(at, from.size(), to);
    at += to.size();
  }
}

class ToolchainCompiler : public SourceCompiler {
 public:
  explicit ToolchainCompiler(ToolchainOptions options)
      : options_(std::move(options)) {
    std::error_code ec;
    options_.work_dir = fs::absolute(options_.work_dir, ec).lexically_normal();
  }

  CompileResult Compile(const VersionRecord& version) override;

 private:
  Status WriteSources(const VersionRecord& version, const fs::path& dir);

  ToolchainOptions options_;
};

Status ToolchainCompiler::WriteSources(const VersionRecord& version,
                                       const fs::path& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) return IoError("cannot clear " + dir.string() + ": " + ec.message());
  fs::create_directories(dir, ec);
  if (ec) {
    return IoError("cannot create " + dir.string() + ": " + ec.message());
  }
  for (const auto& [path, content] : version.files) {
    const fs::path file = dir / path;
    fs::create_directories(file.parent_path(), ec);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << content;
    out.close();
    if (ec || !out) return IoError("cannot write " + file.string());
  }
  return Status::Ok();
}

CompileResult ToolchainCompiler::Compile(const VersionRecord& version) {
  CompileResult result;
  // The sources were checked at deploy; checked again here because they
  // become files and compiler input (a store is not where bytes enter, but
  // this is where they turn into paths).
  Status rules = CheckSources(version.language, version.files,
                              version.sdk_version, version.abi_version);
  if (!rules.ok()) {
    result.log = "refused: " + rules.message() + "\n";
    return result;
  }
  const std::string hash =
      IsHexHash(version.source_hash)
          ? version.source_hash
          : SourceHash(version.language, version.sdk_version, version.files);
  const fs::path src_dir = options_.work_dir / "src" / hash;
  const fs::path artifacts = options_.work_dir / "artifacts";
  Status written = WriteSources(version, src_dir);
  std::error_code ec;
  fs::create_directories(artifacts, ec);
  if (written.ok() && ec) {
    written =
        IoError("cannot create " + artifacts.string() + ": " + ec.message());
  }
  if (!written.ok()) {
    result.log = "error: " + written.message() + "\n";
    return result;
  }

  const std::string name = "m-" + hash.substr(0, 16);
  const fs::path output = artifacts / (hash + ".wasm");
  app::BuildOptions build;
  build.force = true;  // the artifact cache is the queue's, not mtimes
  build.sdk_dir = options_.cpp_sdk_dir;
  build.rust_compute_sdk_dir = options_.rust_sdk_dir;
  std::ostringstream progress;
  Status built;
  fs::path obj_dir;  // the builder's per-kind records, dropped after
  if (version.language == Language::kRust) {
    app::CrateBuildSpec spec;
    spec.name = name;
    spec.crate_dir = src_dir;
    spec.output = output;
    spec.build_dir = options_.work_dir / "rust";
    obj_dir = spec.build_dir / "obj" / name;
    built = app::BuildCrate(spec, build, progress);
    // cargo writes a Cargo.lock beside the sources; the next compile of the
    // same hash starts from the uploaded files only.
    fs::remove(src_dir / "Cargo.lock", ec);
  } else {
    app::Manifest manifest;
    manifest.name = "compute";
    manifest.dir = options_.work_dir / "cpp";
    app::ShardKindSpec spec;
    spec.config.name = name;
    spec.source = src_dir;
    spec.output = output;
    manifest.kinds.push_back(spec);
    obj_dir = manifest.dir / app::kBuildDirName / "obj" / name;
    built = app::BuildKinds(manifest, build, progress);
  }
  result.log = progress.str();
  if (!built.ok()) {
    if (!result.log.empty() && result.log.back() != '\n') result.log += '\n';
    result.log += built.message();
    if (!result.log.empty() && result.log.back() != '\n') result.log += '\n';
  }
  // Paths in the log name the uploaded files ("main.cc:3:5: error: ..."),
  // not the server's directories.
  ReplaceAll(&result.log, src_dir.string() + "/", "");
  ReplaceAll(&result.log, src_dir.string(), ".");
  ReplaceAll(&result.log, options_.work_dir.string() + "/", "");
  // The builder's object directory of this version is not needed again.
  fs::remove_all(obj_dir, ec);
  if (!built.ok()) return result;
  const uintmax_t size = fs::file_size(output, ec);
  if (ec) {
    result.log += "error: the module " + output.filename().string() +
                  " was not written: " + ec.message() + "\n";
    return result;
  }
  // A module that compiles but is not a compute module (an export missing,
  // a foreign import) fails here, with the loader's reason, rather than at
  // enable.
  std::ifstream in(output, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  Result<wasm::ModuleInfo> checked =
      wasm::CheckModule(bytes, ComputeCheckOptions(kCheckMemoryMb));
  if (!checked.ok()) {
    result.log += "error: the compiled module is not a " +
                  std::string(compute_abi::kImportModule) +
                  " module: " + checked.status().message() + "\n";
    fs::remove(output, ec);
    return result;
  }
  result.ok = true;
  result.wasm = output;
  result.size_bytes = static_cast<int64_t>(size);
  return result;
}

}  // namespace

std::unique_ptr<SourceCompiler> MakeToolchainCompiler(
    ToolchainOptions options) {
  return std::make_unique<ToolchainCompiler>(std::move(options));
}

}  // namespace tessera::compute
