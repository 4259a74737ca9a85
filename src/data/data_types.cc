#include "data/data_types.h"

namespace tessera::data {

const char* FieldTypeName(FieldType type) {
  switch (type) {
    case FieldType::kString:
      return "string";
    case FieldType::kInt:
      return "int";
    case FieldType::kFloat:
      return "float";
    case FieldType::kBool:
      return "bool";
    case FieldType::kJson:
      return "json";
  }
  return "string";
}

const char* ChangeOpName(ChangeOp op) {
  switch (op) {
    case ChangeOp::kCreated:
      return "created";
    case ChangeOp::kUpdated:
      return "updated";
    case ChangeOp::kDeleted:
      return "deleted";
  }
  return "created";
}

const FieldSpec* EntityType::FindField(std::string_view field) const {
  for (const FieldSpec& f : fields) {
    if (f.name == field) return &f;
  }
  return nullptr;
}

const IndexSpec* EntityType::FindIndex(std::string_view field) const {
  for (const IndexSpec& i : indexes) {
    if (i.field == field) return &i;
  }
  if (!owner.empty() && owner == field) {
    static const IndexSpec* const kOwnerIndex = new IndexSpec{};
    return kOwnerIndex;  // non-unique; its `field` is not meaningful
  }
  return nullptr;
}

const EntityType* DataSchema::Find(std::string_view type) const {
  for (const EntityType& t : types) {
    if (t.name == type) return &t;
  }
  return nullptr;
}

}  // namespace tessera::data
