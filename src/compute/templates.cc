#include "compute/templates.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

namespace tessera::compute {
namespace {

namespace fs = std::filesystem;

constexpr char kTemplateFile[] = "template.json";

bool IsTemplatesDir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec);
}

Result<std::string> ReadWhole(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return IoError("cannot read " + file.string());
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (in.bad()) return IoError("cannot read " + file.string());
  return text;
}

// <dir>/<name>/template.json, or kNotFound when the directory has none.
Result<TemplateInfo> ReadInfo(const fs::path& dir, const std::string& name) {
  const fs::path file = dir / name / kTemplateFile;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    return NotFound(file.string() + " does not exist");
  }
  Result<std::string> text = ReadWhole(file);
  if (!text.ok()) return text.status();
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object()) {
    return InvalidArgument(file.string() + ": not a JSON object");
  }
  TemplateInfo info;
  info.name = name;
  const auto description = j.find("description");
  if (description == j.end() || !description->is_string()) {
    return InvalidArgument(file.string() +
                           ": \"description\" must be a string");
  }
  info.description = description->get<std::string>();
  const auto language = j.find("language");
  const std::string lang = language != j.end() && language->is_string()
                               ? language->get<std::string>()
                               : "";
  if (lang == LanguageName(Language::kRust)) {
    info.language = Language::kRust;
  } else if (lang == LanguageName(Language::kCpp)) {
    info.language = Language::kCpp;
  } else {
    return InvalidArgument(file.string() +
                           ": \"language\" must be \"rust\" or \"cpp\"");
  }
  return info;
}

// Build leftovers and editor files are not part of a template.
bool Skipped(const std::string& name) {
  return name == "target" || name == "Cargo.lock" || name == kTemplateFile ||
         (!name.empty() && name[0] == '.');
}

}  // namespace

Result<fs::path> FindTemplatesDir() {
  if (const char* env = std::getenv("TESSERA_COMPUTE_TEMPLATES_DIR");
      env && *env) {
    if (IsTemplatesDir(env)) return fs::path(env);
    return NotFound(std::string("TESSERA_COMPUTE_TEMPLATES_DIR=") + env +
                    " is not a directory");
  }
  std::vector<fs::path> candidates;
#ifdef TESSERA_SOURCE_DIR
  candidates.push_back(fs::path(TESSERA_SOURCE_DIR) / "sdk" /
                       "compute-templates");
#endif
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(
        (exe.parent_path() / ".." / "share" / "tessera" / "compute-templates")
            .lexically_normal());
  }
  std::string looked;
  for (const fs::path& c : candidates) {
    if (IsTemplatesDir(c)) return c;
    looked += (looked.empty() ? "" : ", ") + c.string();
  }
  return NotFound("the compute templates were not found (looked in " + looked +
                  "); set TESSERA_COMPUTE_TEMPLATES_DIR");
}

Result<std::vector<TemplateInfo>> ListTemplates(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  if (ec) {
    return IoError("cannot list the templates in " + dir.string() + ": " +
                   ec.message());
  }
  std::vector<std::string> names;
  for (; it != end; it.increment(ec)) {
    if (ec) {
      return IoError("cannot list the templates in " + dir.string() + ": " +
                     ec.message());
    }
    if (!it->is_directory(ec)) continue;
    const std::string name = it->path().filename().string();
    if (Skipped(name)) continue;
    if (!fs::is_regular_file(it->path() / kTemplateFile, ec)) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::vector<TemplateInfo> out;
  for (const std::string& name : names) {
    Result<TemplateInfo> info = ReadInfo(dir, name);
    if (!info.ok()) return info.status();
    out.push_back(std::move(*info));
  }
  return out;
}

Result<SourceFiles> LoadTemplate(const fs::path& dir, std::string_view name,
                                 TemplateInfo* info) {
  Result<std::vector<TemplateInfo>> all = ListTemplates(dir);
  if (!all.ok()) return all.status();
  const auto found =
      std::find_if(all->begin(), all->end(),
                   [&](const TemplateInfo& t) { return t.name == name; });
  if (found == all->end()) {
    std::string names;
    for (const TemplateInfo& t : *all) {
      names += (names.empty() ? "" : ", ") + t.name;
    }
    return NotFound("no compute template named \"" + std::string(name) +
                    "\" (templates: " + (names.empty() ? "none" : names) + ")");
  }
  const fs::path root = dir / found->name;
  SourceFiles files;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string leaf = it->path().filename().string();
    if (Skipped(leaf)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    Result<std::string> text = ReadWhole(it->path());
    if (!text.ok()) return text.status();
    files[it->path().lexically_relative(root).generic_string()] =
        std::move(*text);
  }
  if (ec) {
    return IoError("cannot read the template " + root.string() + ": " +
                   ec.message());
  }
  if (files.empty()) {
    return InvalidArgument("the template " + root.string() + " has no files");
  }
  if (info != nullptr) *info = *found;
  return files;
}

}  // namespace tessera::compute
