#include "realm/rules.h"

#include <algorithm>
#include <string>
#include <vector>

namespace tessera::realm {
namespace {

using Kind = PatternSegment::Kind;
using Capture = std::optional<std::string>;

// ---- Matching -------------------------------------------------------------

bool SegmentMatches(const PatternSegment& p, const PathSegment& s,
                    Capture* capture) {
  const std::string* key = std::get_if<std::string>(&s);
  switch (p.kind) {
    case Kind::kLiteral:
      return key != nullptr && *key == p.text;
    case Kind::kStar:
    case Kind::kRest:
      return true;
    case Kind::kAvatar:
      if (key == nullptr) return false;  // an index never names an owner
      *capture = *key;
      return true;
  }
  return false;
}

// Whether `pattern` matches exactly `path`.
bool Matches(const std::vector<PatternSegment>& pattern, const Path& path,
             Capture* capture) {
  capture->reset();
  size_t j = 0;
  for (const PathSegment& s : path) {
    if (j == pattern.size()) return false;
    if (pattern[j].kind == Kind::kRest) return true;
    if (!SegmentMatches(pattern[j], s, capture)) return false;
    ++j;
  }
  return j == pattern.size() ||
         (j + 1 == pattern.size() && pattern[j].kind == Kind::kRest);
}

// Which of the paths strictly below `path` `pattern` can match.
enum class Below { kNone, kSome, kAll };

Below MatchBelow(const std::vector<PatternSegment>& pattern, const Path& path,
                 Capture* capture) {
  capture->reset();
  size_t j = 0;
  for (const PathSegment& s : path) {
    if (j == pattern.size()) return Below::kNone;
    if (pattern[j].kind == Kind::kRest) return Below::kAll;
    if (!SegmentMatches(pattern[j], s, capture)) return Below::kNone;
    ++j;
  }
  if (j == pattern.size()) return Below::kNone;
  return pattern[j].kind == Kind::kRest ? Below::kAll : Below::kSome;
}

// ---- Writes -----------------------------------------------------------------

bool Permits(WriteMode mode, const Capture& capture, std::string_view avatar,
             bool append_here) {
  switch (mode) {
    case WriteMode::kEveryone:
      return true;
    case WriteMode::kServer:
      return false;
    case WriteMode::kOwner:
      return capture.has_value() && *capture == avatar;
    case WriteMode::kAppend:
      return append_here;
  }
  return false;
}

std::string Why(WriteMode mode, const Capture& capture) {
  switch (mode) {
    case WriteMode::kServer:
      return "is server-only";
    case WriteMode::kOwner:
      return capture ? "is owned by avatar " + *capture
                     : "is owned by each avatar";
    case WriteMode::kAppend:
      return "is append-only";
    case WriteMode::kEveryone:
      break;
  }
  return "is writable";
}

std::string RuleRef(const Rules& rules, size_t i) {
  return "rule " + std::to_string(i) + " \"" + rules.rules[i].text + "\"";
}

Status Denied(std::string message) {
  return Status(StatusCode::kPermissionDenied, std::move(message));
}

// ---- Reads ------------------------------------------------------------------

// The decision for exactly `path`, ignoring the paths above it.
bool NodeReadable(const Rules& rules, const Path& path,
                  std::string_view avatar) {
  Capture capture;
  for (const Rule& r : rules.rules) {
    if (!r.read || !Matches(r.pattern, path, &capture)) continue;
    switch (*r.read) {
      case ReadMode::kEveryone:
        return true;
      case ReadMode::kServer:
        return false;
      case ReadMode::kOwner:
        return capture.has_value() && *capture == avatar;
    }
  }
  return true;
}

// Whether some read rule may decide a path strictly below `path`.
bool AnyReadRuleBelow(const Rules& rules, const Path& path) {
  Capture capture;
  for (const Rule& r : rules.rules) {
    if (r.read && MatchBelow(r.pattern, path, &capture) != Below::kNone) {
      return true;
    }
  }
  return false;
}

// `value`, which lies at the readable `*path`, without what is unreadable
// below it. `*path` is restored on return.
Json Trim(const Rules& rules, const Json& value, Path* path,
          std::string_view avatar) {
  if (!value.is_structured() || !AnyReadRuleBelow(rules, *path)) return value;
  if (value.is_object()) {
    Json out = Json::object();
    for (auto it = value.begin(); it != value.end(); ++it) {
      path->push_back(it.key());
      if (NodeReadable(rules, *path, avatar)) {
        out[it.key()] = Trim(rules, it.value(), path, avatar);
      }
      path->pop_back();
    }
    return out;
  }
  Json out = Json::array();
  for (size_t i = 0; i < value.size(); ++i) {
    path->push_back(static_cast<int64_t>(i));
    out.push_back(NodeReadable(rules, *path, avatar)
                      ? Trim(rules, value[i], path, avatar)
                      : Json(nullptr));
    path->pop_back();
  }
  return out;
}

}  // namespace

std::string RulePathText(const Path& path) {
  return path.empty() ? "(root)" : PathText(path);
}

Status CheckWrite(const Rules& rules, const Op& op,
                  std::string_view avatar_id) {
  const std::string path_text = RulePathText(op.path);
  Capture capture;
  std::optional<size_t> decided;
  for (size_t i = 0; i < rules.rules.size() && !decided; ++i) {
    const Rule& r = rules.rules[i];
    if (r.write && Matches(r.pattern, op.path, &capture)) decided = i;
  }
  if (!decided) {
    return Denied(path_text +
                  " is server-only: no rule lets clients write it (writes "
                  "default to server-only)");
  }
  const WriteMode mode = *rules.rules[*decided].write;
  if (!Permits(mode, capture, avatar_id, op.kind == OpKind::kAppend)) {
    std::string msg = path_text + " " + Why(mode, capture) + " (" +
                      RuleRef(rules, *decided) + ")";
    if (mode == WriteMode::kAppend) {
      msg += ": only an append on " + path_text + " itself is accepted";
    }
    return Denied(std::move(msg));
  }
  // An append adds an element and replaces nothing; a set or delete drops
  // the whole subtree, so every rule below the path must let this avatar.
  if (op.kind == OpKind::kAppend) return Status::Ok();
  for (size_t i = 0; i < rules.rules.size(); ++i) {
    const Rule& r = rules.rules[i];
    if (!r.write) continue;
    const Below below = MatchBelow(r.pattern, op.path, &capture);
    if (below == Below::kNone) continue;
    if (!Permits(*r.write, capture, avatar_id, false)) {
      return Denied(std::string(OpName(op.kind)) + " on " + path_text +
                    " would replace " + r.text + ", which " +
                    Why(*r.write, capture) + " (" + RuleRef(rules, i) + ")");
    }
    if (below == Below::kAll) break;  // shadows every later rule below
  }
  return Status::Ok();
}

bool CanRead(const Rules& rules, const Path& path, std::string_view avatar) {
  Path prefix;
  prefix.reserve(path.size());
  if (!NodeReadable(rules, prefix, avatar)) return false;
  for (const PathSegment& s : path) {
    prefix.push_back(s);
    if (!NodeReadable(rules, prefix, avatar)) return false;
  }
  return true;
}

Json SliceForReader(const Rules& rules, const Json& doc,
                    std::string_view avatar) {
  Path path;
  if (!NodeReadable(rules, path, avatar)) return Json::object();
  return Trim(rules, doc, &path, avatar);
}

bool RestrictsReads(const Rules& rules) {
  return std::any_of(rules.rules.begin(), rules.rules.end(),
                     [](const Rule& rule) {
                       return rule.read && *rule.read != ReadMode::kEveryone;
                     });
}

std::optional<Op> SliceOp(const Rules& rules, const Op& op,
                          std::string_view avatar) {
  if (!CanRead(rules, op.path, avatar)) {
    // An element of a list the reader sees: its slot stays (as null), so a
    // set or delete there must still reach the reader to keep indices.
    const bool element =
        !op.path.empty() && std::holds_alternative<int64_t>(op.path.back());
    if (!element || op.kind == OpKind::kAppend) return std::nullopt;
    Path parent(op.path.begin(), op.path.end() - 1);
    if (!CanRead(rules, parent, avatar)) return std::nullopt;
    Op out = op;
    if (op.kind == OpKind::kSet) out.value = nullptr;
    return out;
  }
  Op out = op;
  Path path = op.path;
  if (op.kind == OpKind::kSet) {
    out.value = Trim(rules, op.value, &path, avatar);
  } else if (op.kind == OpKind::kAppend) {
    // Which index the element gets does not matter: literals never match
    // an index and {avatar} never does.
    path.push_back(int64_t{0});
    out.value = NodeReadable(rules, path, avatar)
                    ? Trim(rules, op.value, &path, avatar)
                    : Json(nullptr);
  }
  return out;
}

}  // namespace tessera::realm
