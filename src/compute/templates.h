// Bundled module templates (computeDeployTemplate): each is a directory
// <templates dir>/<name>/ with template.json {"description", "language"}
// and the module's files (Cargo.toml + src/*.rs, or *.cc/*.h).
#ifndef TESSERA_COMPUTE_TEMPLATES_H_
#define TESSERA_COMPUTE_TEMPLATES_H_

#include <filesystem>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "compute/engine.h"
#include "compute/source_compiler.h"

namespace tessera::compute {

// $TESSERA_COMPUTE_TEMPLATES_DIR, else the source tree's
// sdk/compute-templates, else <exe dir>/../share/tessera/compute-templates.
Result<std::filesystem::path> FindTemplatesDir();
// By name. Errors: kIo / kInvalidArgument for a broken template.json.
Result<std::vector<TemplateInfo>> ListTemplates(
    const std::filesystem::path& dir);
// The files of one template (template.json excluded). Errors: kNotFound
// naming the templates there are.
Result<SourceFiles> LoadTemplate(const std::filesystem::path& dir,
                                 std::string_view name,
                                 TemplateInfo* info = nullptr);

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_TEMPLATES_H_
