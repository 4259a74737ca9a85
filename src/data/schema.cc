// The manifest's "data" section and its additive migrations (schema.h).
#include "data/schema.h"

#include <nlohmann/json.hpp>
#include <set>

#include "data/values_internal.h"

namespace tessera::data {

using nlohmann::json;

namespace {

// Parse errors name the JSON path under `where`.
class Parser {
 public:
  explicit Parser(std::string_view where)
      : base_(where.empty() ? "data" : std::string(where)) {}

  Result<DataSchema> Parse(std::string_view text) {
    json root = json::parse(text, nullptr, false);
    if (root.is_discarded()) return Fail(base_, "not valid JSON");
    if (!root.is_object())
      return Fail(base_, "must be an object {\"types\": [...]}");
    TESSERA_RETURN_IF_ERROR(OnlyKeys(root, base_, {"types"}));
    DataSchema schema;
    auto it = root.find("types");
    if (it == root.end()) return schema;
    std::string path = base_ + ".types";
    if (!it->is_array()) return Fail(path, "must be an array");
    if (it->size() > kMaxTypes) {
      return Fail(path, "at most " + std::to_string(kMaxTypes) + " types");
    }
    for (size_t i = 0; i < it->size(); ++i) {
      std::string tpath = path + "[" + std::to_string(i) + "]";
      Result<EntityType> type = ParseType((*it)[i], tpath);
      if (!type.ok()) return type.status();
      if (schema.Find(type->name) != nullptr) {
        return Fail(tpath + ".name",
                    "type " + internal::Quote(type->name) + " declared twice");
      }
      schema.types.push_back(std::move(type.value()));
    }
    return schema;
  }

 private:
  static Status Fail(const std::string& path, const std::string& text) {
    return InvalidArgument(path + ": " + text);
  }

  static Status OnlyKeys(const json& object, const std::string& path,
                         std::initializer_list<const char*> allowed) {
    for (auto& [key, value] : object.items()) {
      bool known = false;
      for (const char* a : allowed) known = known || key == a;
      if (!known) {
        std::string list;
        for (const char* a : allowed)
          list += std::string(list.empty() ? "" : ", ") + a;
        return Fail(path, "unknown key " + internal::Quote(key) +
                              " (keys: " + list + ")");
      }
    }
    return Status::Ok();
  }

  static Result<std::string> String(const json& object, const char* key,
                                    const std::string& path) {
    auto it = object.find(key);
    if (it == object.end())
      return Fail(path, std::string("\"") + key + "\" is missing");
    if (!it->is_string()) return Fail(path + "." + key, "must be a string");
    return it->get<std::string>();
  }

  static Result<bool> Bool(const json& object, const char* key,
                           const std::string& path) {
    auto it = object.find(key);
    if (it == object.end()) return false;
    if (!it->is_boolean())
      return Fail(path + "." + key, "must be true or false");
    return it->get<bool>();
  }

  Result<EntityType> ParseType(const json& value, const std::string& path) {
    if (!value.is_object()) return Fail(path, "must be an object");
    TESSERA_RETURN_IF_ERROR(
        OnlyKeys(value, path, {"name", "fields", "indexes", "owner"}));
    EntityType type;
    Result<std::string> name = String(value, "name", path);
    if (!name.ok()) return name.status();
    if (!internal::ValidName(*name, /*upper=*/true)) {
      return Fail(path + ".name",
                  internal::Quote(*name) +
                      " is not a type name ([A-Z][A-Za-z0-9_]{0,63})");
    }
    type.name = *name;
    auto fields = value.find("fields");
    if (fields == value.end()) return Fail(path, "\"fields\" is missing");
    if (!fields->is_array()) return Fail(path + ".fields", "must be an array");
    if (fields->size() > kMaxFieldsPerType) {
      return Fail(path + ".fields",
                  "at most " + std::to_string(kMaxFieldsPerType) + " fields");
    }
    for (size_t i = 0; i < fields->size(); ++i) {
      std::string fpath = path + ".fields[" + std::to_string(i) + "]";
      Result<FieldSpec> field = ParseField((*fields)[i], fpath);
      if (!field.ok()) return field.status();
      if (type.FindField(field->name) != nullptr) {
        return Fail(fpath + ".name", "field " + internal::Quote(field->name) +
                                         " declared twice");
      }
      type.fields.push_back(std::move(field.value()));
    }
    auto indexes = value.find("indexes");
    if (indexes != value.end()) {
      if (!indexes->is_array())
        return Fail(path + ".indexes", "must be an array");
      for (size_t i = 0; i < indexes->size(); ++i) {
        std::string ipath = path + ".indexes[" + std::to_string(i) + "]";
        const json& index = (*indexes)[i];
        if (!index.is_object())
          return Fail(ipath, "must be an object {\"field\", \"unique\"?}");
        TESSERA_RETURN_IF_ERROR(OnlyKeys(index, ipath, {"field", "unique"}));
        IndexSpec spec;
        Result<std::string> field = String(index, "field", ipath);
        if (!field.ok()) return field.status();
        Result<bool> unique = Bool(index, "unique", ipath);
        if (!unique.ok()) return unique.status();
        const FieldSpec* f = type.FindField(*field);
        if (f == nullptr) {
          return Fail(ipath + ".field",
                      type.name + " has no field " + internal::Quote(*field));
        }
        if (f->type == FieldType::kJson) {
          return Fail(ipath + ".field", "a json field cannot be indexed");
        }
        for (const IndexSpec& other : type.indexes) {
          if (other.field == *field) {
            return Fail(ipath + ".field", "field " + internal::Quote(*field) +
                                              " is indexed twice");
          }
        }
        spec.field = *field;
        spec.unique = *unique;
        type.indexes.push_back(spec);
      }
    }
    if (value.contains("owner")) {
      Result<std::string> owner = String(value, "owner", path);
      if (!owner.ok()) return owner.status();
      const FieldSpec* f = type.FindField(*owner);
      if (f == nullptr) {
        return Fail(path + ".owner",
                    type.name + " has no field " + internal::Quote(*owner));
      }
      if (f->type != FieldType::kString) {
        return Fail(path + ".owner", "the owner field " +
                                         internal::Quote(*owner) +
                                         " must be a string field");
      }
      type.owner = *owner;
    }
    return type;
  }

  Result<FieldSpec> ParseField(const json& value, const std::string& path) {
    if (!value.is_object()) {
      return Fail(path, "must be an object {\"name\", \"type\", ...}");
    }
    TESSERA_RETURN_IF_ERROR(
        OnlyKeys(value, path, {"name", "type", "required", "default"}));
    FieldSpec field;
    Result<std::string> name = String(value, "name", path);
    if (!name.ok()) return name.status();
    if (internal::IsReserved(*name)) {
      return Fail(path + ".name", internal::Quote(*name) +
                                      " is reserved (id, createdAt, updatedAt, "
                                      "version are every row's)");
    }
    if (!internal::ValidName(*name, /*upper=*/false)) {
      return Fail(path + ".name",
                  internal::Quote(*name) +
                      " is not a field name ([a-z][A-Za-z0-9_]{0,63})");
    }
    field.name = *name;
    Result<std::string> type = String(value, "type", path);
    if (!type.ok()) return type.status();
    static constexpr FieldType kTypes[] = {FieldType::kString, FieldType::kInt,
                                           FieldType::kFloat, FieldType::kBool,
                                           FieldType::kJson};
    bool found = false;
    for (FieldType t : kTypes) {
      if (*type == FieldTypeName(t)) {
        field.type = t;
        found = true;
      }
    }
    if (!found) {
      return Fail(path + ".type",
                  "unknown type " + internal::Quote(*type) +
                      " (types: string, int, float, bool, json)");
    }
    Result<bool> required = Bool(value, "required", path);
    if (!required.ok()) return required.status();
    field.required = *required;
    auto def = value.find("default");
    if (def != value.end()) {
      Result<json> checked = internal::CheckValue(field.type, *def);
      if (def->is_null() || (checked.ok() && checked->is_null())) {
        return Fail(path + ".default", "null is not a default (leave it out)");
      }
      if (!checked.ok())
        return Fail(path + ".default", checked.status().message());
      field.default_json = checked->dump();
    }
    return field;
  }

  std::string base_;
};

std::string DefaultText(const FieldSpec& f) {
  return f.default_json.empty() ? "none" : f.default_json;
}

}  // namespace

Result<DataSchema> ParseDataSchema(std::string_view json_text,
                                   std::string_view where) {
  return Parser(where).Parse(json_text);
}

std::string DataSchemaJson(const DataSchema& schema) {
  json types = json::array();
  for (const EntityType& type : schema.types) {
    json t;
    t["name"] = type.name;
    json fields = json::array();
    for (const FieldSpec& field : type.fields) {
      json f;
      f["name"] = field.name;
      f["type"] = FieldTypeName(field.type);
      if (field.required) f["required"] = true;
      if (!field.default_json.empty()) {
        f["default"] = json::parse(field.default_json, nullptr, false);
      }
      fields.push_back(std::move(f));
    }
    t["fields"] = std::move(fields);
    if (!type.indexes.empty()) {
      json indexes = json::array();
      for (const IndexSpec& index : type.indexes) {
        json i;
        i["field"] = index.field;
        if (index.unique) i["unique"] = true;
        indexes.push_back(std::move(i));
      }
      t["indexes"] = std::move(indexes);
    }
    if (!type.owner.empty()) t["owner"] = type.owner;
    types.push_back(std::move(t));
  }
  json root;
  root["types"] = std::move(types);
  return root.dump();
}

Result<std::vector<SchemaChange>> DiffSchemas(const DataSchema& applied,
                                              const DataSchema& next) {
  std::vector<std::string> refused;
  std::vector<SchemaChange> changes;
  for (const EntityType& old_type : applied.types) {
    const EntityType* type = next.Find(old_type.name);
    if (type == nullptr) {
      refused.push_back(old_type.name + ": type removed");
      continue;
    }
    for (const FieldSpec& old_field : old_type.fields) {
      std::string name = old_type.name + "." + old_field.name;
      const FieldSpec* field = type->FindField(old_field.name);
      if (field == nullptr) {
        refused.push_back(name + ": field removed");
        continue;
      }
      if (field->type != old_field.type) {
        refused.push_back(name + ": type " + FieldTypeName(old_field.type) +
                          " -> " + FieldTypeName(field->type));
      }
      if (field->required != old_field.required) {
        refused.push_back(name + ": required " +
                          (old_field.required ? "true" : "false") + " -> " +
                          (field->required ? "true" : "false"));
      }
      if (field->default_json != old_field.default_json) {
        refused.push_back(name + ": default " + DefaultText(old_field) +
                          " -> " + DefaultText(*field));
      }
    }
    for (const IndexSpec& old_index : old_type.indexes) {
      std::string name = old_type.name + "." + old_index.field;
      const IndexSpec* index = nullptr;
      for (const IndexSpec& i : type->indexes) {
        if (i.field == old_index.field) index = &i;
      }
      if (index == nullptr) {
        refused.push_back(name + ": index removed");
      } else if (index->unique != old_index.unique) {
        refused.push_back(name + ": index unique " +
                          (old_index.unique ? "true" : "false") + " -> " +
                          (index->unique ? "true" : "false"));
      }
    }
    if (!old_type.owner.empty() && type->owner != old_type.owner) {
      refused.push_back(old_type.name + ": owner " + old_type.owner + " -> " +
                        (type->owner.empty() ? "none" : type->owner));
    }
    // What is new in the type.
    for (const FieldSpec& field : type->fields) {
      if (old_type.FindField(field.name) != nullptr) continue;
      if (field.required && field.default_json.empty()) {
        refused.push_back(old_type.name + "." + field.name +
                          ": a new field must be optional or have a default");
        continue;
      }
      changes.push_back(
          {SchemaChange::Kind::kAddField, type->name, field.name});
    }
    for (const IndexSpec& index : type->indexes) {
      bool had = false;
      for (const IndexSpec& i : old_type.indexes)
        had = had || i.field == index.field;
      if (!had) {
        changes.push_back(
            {SchemaChange::Kind::kAddIndex, type->name, index.field});
      }
    }
    if (old_type.owner.empty() && !type->owner.empty()) {
      changes.push_back(
          {SchemaChange::Kind::kSetOwner, type->name, type->owner});
    }
  }
  for (const EntityType& type : next.types) {
    if (applied.Find(type.name) == nullptr) {
      changes.push_back({SchemaChange::Kind::kAddType, type.name, ""});
    }
  }
  if (!refused.empty()) {
    std::string message = "data schema change refused: ";
    for (size_t i = 0; i < refused.size(); ++i) {
      if (i > 0) message += "; ";
      message += refused[i];
    }
    message += " (only new types, fields and indexes apply at boot)";
    return Status(StatusCode::kFailedPrecondition, std::move(message));
  }
  return changes;
}

}  // namespace tessera::data
