#include "app/manifest_realms.h"

#include <utility>

#include "realm/kind.h"

namespace tessera::app {
namespace internal {
namespace {

// "file: realms[1]", plus ' ("match")' when the entry has a valid name, so
// that a message says which kind it is about without counting entries.
std::string EntryLabel(const nlohmann::json& entry,
                       const std::string& file_label, size_t index) {
  std::string label = file_label + ": realms[" + std::to_string(index) + "]";
  if (entry.is_object()) {
    auto name = entry.find("name");
    if (name != entry.end() && name->is_string() &&
        IsValidKindName(name->get_ref<const std::string&>())) {
      label += " (\"" + name->get<std::string>() + "\")";
    }
  }
  return label;
}

std::string ModuleList(const std::vector<ComputeModuleSpec>& compute) {
  std::string list;
  for (const ComputeModuleSpec& module : compute) {
    if (!list.empty()) list += ", ";
    list += "\"" + module.name + "\"";
  }
  return list;
}

}  // namespace

Status ParseRealmsSection(const nlohmann::json& realms,
                          const std::string& file_label, Manifest* m) {
  for (size_t i = 0; i < realms.size(); ++i) {
    const std::string where = EntryLabel(realms[i], file_label, i);
    Result<realm::RealmKindConfig> kind =
        realm::ParseRealmKind(realms[i], where);
    if (!kind.ok()) return kind.status();
    const std::string& name = kind->name;
    for (size_t j = 0; j < m->realms.size(); ++j) {
      if (m->realms[j].name == name) {
        return InvalidArgument(where + ": realm kind \"" + name +
                               "\" is already declared by realms[" +
                               std::to_string(j) +
                               "]; give each kind its own name");
      }
    }
    for (size_t j = 0; j < m->kinds.size(); ++j) {
      if (m->kinds[j].config.name == name) {
        return InvalidArgument(
            where + ": \"" + name + "\" is also the name of shards[" +
            std::to_string(j) +
            "]; shard kinds and realm kinds share the names clients connect "
            "to, so rename one of them");
      }
    }
    if (!kind->module.empty()) {
      bool declared = false;
      for (const ComputeModuleSpec& module : m->compute) {
        declared = declared || module.name == kind->module;
      }
      if (!declared) {
        std::string what = where + ".module: \"" + kind->module +
                           "\" is not a compute module of this manifest; ";
        what += m->compute.empty()
                    ? "it declares none, so add one to \"compute\""
                    : "declare it in \"compute\" or name one of " +
                          ModuleList(m->compute);
        return InvalidArgument(what);
      }
    }
    m->realms.push_back(std::move(kind).value());
  }
  return Status::Ok();
}

}  // namespace internal

const realm::RealmKindConfig* Manifest::FindRealm(
    std::string_view realm_name) const {
  for (const realm::RealmKindConfig& r : realms) {
    if (r.name == realm_name) return &r;
  }
  return nullptr;
}

}  // namespace tessera::app
