// ComputeEngine's bundled templates (templates.h): the list, and a deploy
// of one by name (the module is created when absent).
#include "compute/engine_internal.h"
#include "compute/templates.h"
#include "tessera/compute_abi.h"

namespace tessera::compute {

Result<VersionRecord> ComputeEngine::DeployTemplate(
    std::string_view template_name, std::string_view module) {
  Impl& e = *impl_;
  std::filesystem::path dir = e.options.templates_dir;
  if (dir.empty()) {
    Result<std::filesystem::path> found = FindTemplatesDir();
    if (!found.ok()) return found.status();
    dir = *found;
  }
  TemplateInfo info;
  Result<SourceFiles> files = LoadTemplate(dir, template_name, &info);
  if (!files.ok()) return files.status();
  const std::string name(module.empty() ? template_name : module);
  if (e.Find(name) == nullptr) {
    Result<ModuleRecord> created = UpsertModule(name, info.description, false);
    if (!created.ok()) return created.status();
  }
  DeployRequest request;
  request.module = name;
  request.files = std::move(*files);
  request.language = info.language;
  request.sdk_version = compute_abi::kSdkVersion;
  request.abi_version = compute_abi::kAbiVersion;
  request.template_name = std::string(template_name);
  return DeployVersion(std::move(request));
}

std::vector<TemplateInfo> ComputeEngine::Templates() const {
  std::filesystem::path dir = impl_->options.templates_dir;
  if (dir.empty()) {
    Result<std::filesystem::path> found = FindTemplatesDir();
    if (!found.ok()) return {};
    dir = *found;
  }
  Result<std::vector<TemplateInfo>> list = ListTemplates(dir);
  return list.ok() ? *list : std::vector<TemplateInfo>{};
}

}  // namespace tessera::compute
