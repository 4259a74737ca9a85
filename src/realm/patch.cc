// Realm patches (patch.h): op names, path text and ApplyPatch.
//
// ApplyPatch is atomic without copying the document: each op that changes
// the document first records how to take the change back (an Undo: the
// value it replaced or removed, moved out, never copied), and a failing op
// replays the undo list of the ops before it in reverse. Undo steps name
// their container by path, resolved again when replayed, because a later
// op may have moved it in memory (a list that grew); replayed in reverse,
// each step sees the document exactly as its op left it.
#include "realm/patch.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common/text.h"

namespace tessera::realm {

namespace {

constexpr size_t kTextBytes = 200;

const char* KindOf(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a bool";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "a number";
    case Json::value_t::array:
      return "a list";
    case Json::value_t::object:
      return "an object";
    default:
      return "binary";
  }
}

std::string EscapeKey(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// The first `n` segments of `path` as quoted text for a message.
std::string Where(const Path& path, size_t n) {
  if (n == 0) return "the root";
  const Path prefix(path.begin(), path.begin() + static_cast<ptrdiff_t>(n));
  return "\"" + EscapeForLog(PathText(prefix), kTextBytes) + "\"";
}

// The value at the first `n` segments of `path`, or nullptr with the
// reason in *why.
Json* Walk(Json* doc, const Path& path, size_t n, std::string* why) {
  Json* at = doc;
  for (size_t i = 0; i < n; ++i) {
    if (const auto* key = std::get_if<std::string>(&path[i])) {
      if (!at->is_object()) {
        *why = Where(path, i) + " is " + KindOf(*at) + ", not an object";
        return nullptr;
      }
      auto it = at->find(*key);
      if (it == at->end()) {
        *why = Where(path, i) + " has no key \"" +
               EscapeForLog(*key, kTextBytes) + "\"";
        return nullptr;
      }
      at = &*it;
    } else {
      const int64_t index = std::get<int64_t>(path[i]);
      if (!at->is_array()) {
        *why = Where(path, i) + " is " + KindOf(*at) + ", not a list";
        return nullptr;
      }
      if (index < 0 || static_cast<uint64_t>(index) >= at->size()) {
        *why = Where(path, i) + " has no index " + std::to_string(index) +
               " (size " + std::to_string(at->size()) + ")";
        return nullptr;
      }
      at = &(*at)[static_cast<size_t>(index)];
    }
  }
  return at;
}

// How to take back one change. The container is the value at the first
// `n` segments of `*path`; the key or index acted on, where there is one,
// is (*path)[n].
struct Undo {
  enum Kind {
    kRestoreRoot,  // *doc = old
    kPutKey,       // container[key] = old
    kEraseKey,     // erase container[key]
    kAssignIndex,  // container[index] = old
    kInsertIndex,  // insert old at index
    kPopBack,      // remove the container's last element
  };
  Kind kind;
  const Path* path;
  size_t n;
  Json old;
};

void Replay(std::vector<Undo>* undo, Json* doc) {
  std::string ignored;
  for (auto it = undo->rbegin(); it != undo->rend(); ++it) {
    if (it->kind == Undo::kRestoreRoot) {
      *doc = std::move(it->old);
      continue;
    }
    // Found: the document is as the step's op left it.
    Json* c = Walk(doc, *it->path, it->n, &ignored);
    if (c == nullptr) continue;
    switch (it->kind) {
      case Undo::kPutKey:
        (*c)[std::get<std::string>((*it->path)[it->n])] = std::move(it->old);
        break;
      case Undo::kEraseKey:
        c->erase(std::get<std::string>((*it->path)[it->n]));
        break;
      case Undo::kAssignIndex:
        (*c)[static_cast<size_t>(std::get<int64_t>((*it->path)[it->n]))] =
            std::move(it->old);
        break;
      case Undo::kInsertIndex: {
        auto& list = c->get_ref<Json::array_t&>();
        list.insert(list.begin() + std::get<int64_t>((*it->path)[it->n]),
                    std::move(it->old));
        break;
      }
      case Undo::kPopBack:
        c->get_ref<Json::array_t&>().pop_back();
        break;
      case Undo::kRestoreRoot:
        break;
    }
  }
}

// Checks the op's parent (the value at all segments but the last) is the
// container its last segment needs. Returns it, or nullptr with *why.
Json* Parent(Json* doc, const Op& op, std::string* why) {
  const size_t n = op.path.size() - 1;
  Json* parent = Walk(doc, op.path, n, why);
  if (parent == nullptr) return nullptr;
  const bool key = std::holds_alternative<std::string>(op.path[n]);
  if (key && !parent->is_object()) {
    *why = Where(op.path, n) + " is " + KindOf(*parent) + ", not an object";
    return nullptr;
  }
  if (!key && !parent->is_array()) {
    *why = Where(op.path, n) + " is " + KindOf(*parent) + ", not a list";
    return nullptr;
  }
  return parent;
}

// Applies one op, recording its undo step. Empty on success, else why not.
std::string ApplyOne(const Op& op, Json* doc, std::vector<Undo>* undo) {
  std::string why;
  if (op.path.empty()) {
    if (op.kind == OpKind::kDelete) return "the root cannot be deleted";
    if (op.kind == OpKind::kAppend) return "the root is an object, not a list";
    if (!op.value.is_object()) {
      return std::string("the root must be an object, not ") + KindOf(op.value);
    }
    undo->push_back({Undo::kRestoreRoot, &op.path, 0, std::move(*doc)});
    *doc = op.value;
    return "";
  }
  Json* parent = Parent(doc, op, &why);
  if (parent == nullptr) return why;
  const size_t n = op.path.size() - 1;
  const PathSegment& last = op.path[n];

  if (const auto* key = std::get_if<std::string>(&last)) {
    auto it = parent->find(*key);
    switch (op.kind) {
      case OpKind::kSet:
        if (it != parent->end()) {
          undo->push_back({Undo::kPutKey, &op.path, n, std::move(*it)});
          *it = op.value;
        } else {
          undo->push_back({Undo::kEraseKey, &op.path, n, Json()});
          parent->emplace(*key, op.value);
        }
        return "";
      case OpKind::kDelete:
        if (it == parent->end()) {
          return Where(op.path, n) + " has no key \"" +
                 EscapeForLog(*key, kTextBytes) + "\"";
        }
        undo->push_back({Undo::kPutKey, &op.path, n, std::move(*it)});
        parent->erase(it);
        return "";
      case OpKind::kAppend:
        if (it == parent->end()) {
          Json list = Json::array();
          list.push_back(op.value);
          undo->push_back({Undo::kEraseKey, &op.path, n, Json()});
          parent->emplace(*key, std::move(list));
          return "";
        }
        if (!it->is_array()) {
          return Where(op.path, n + 1) + " is " + KindOf(*it) + ", not a list";
        }
        undo->push_back({Undo::kPopBack, &op.path, n + 1, Json()});
        it->push_back(op.value);
        return "";
    }
    return "unknown op";
  }

  const int64_t index = std::get<int64_t>(last);
  const size_t size = parent->size();
  const bool appends = op.kind == OpKind::kSet && index >= 0 &&
                       static_cast<uint64_t>(index) == size;
  if (!appends && (index < 0 || static_cast<uint64_t>(index) >= size)) {
    return Where(op.path, n) + " has no index " + std::to_string(index) +
           " (size " + std::to_string(size) + ")";
  }
  const size_t i = static_cast<size_t>(index);
  switch (op.kind) {
    case OpKind::kSet:
      if (appends) {
        undo->push_back({Undo::kPopBack, &op.path, n, Json()});
        parent->push_back(op.value);
      } else {
        undo->push_back(
            {Undo::kAssignIndex, &op.path, n, std::move((*parent)[i])});
        (*parent)[i] = op.value;
      }
      return "";
    case OpKind::kDelete: {
      auto& list = parent->get_ref<Json::array_t&>();
      undo->push_back({Undo::kInsertIndex, &op.path, n, std::move(list[i])});
      list.erase(list.begin() + index);
      return "";
    }
    case OpKind::kAppend: {
      Json& target = (*parent)[i];
      if (!target.is_array()) {
        return Where(op.path, n + 1) + " is " + KindOf(target) + ", not a list";
      }
      undo->push_back({Undo::kPopBack, &op.path, n + 1, Json()});
      target.push_back(op.value);
      return "";
    }
  }
  return "unknown op";
}

}  // namespace

std::string_view OpName(OpKind kind) {
  switch (kind) {
    case OpKind::kSet:
      return "set";
    case OpKind::kDelete:
      return "delete";
    case OpKind::kAppend:
      return "append";
  }
  return "unknown";
}

std::string PathText(const Path& path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (i > 0) out += '/';
    if (const auto* key = std::get_if<std::string>(&path[i])) {
      out += EscapeKey(*key);
    } else {
      out += std::to_string(std::get<int64_t>(path[i]));
    }
  }
  return out;
}

Status ApplyPatch(const Patch& patch, Json* doc) {
  std::vector<Undo> undo;
  undo.reserve(patch.size());
  for (size_t i = 0; i < patch.size(); ++i) {
    const Op& op = patch[i];
    std::string why = ApplyOne(op, doc, &undo);
    if (!why.empty()) {
      Replay(&undo, doc);
      return InvalidArgument("op " + std::to_string(i) + " (" +
                             std::string(OpName(op.kind)) + " " +
                             Where(op.path, op.path.size()) + "): " + why);
    }
  }
  return Status::Ok();
}

}  // namespace tessera::realm
