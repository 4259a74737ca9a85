#include "compute/source_scan.h"

#include <algorithm>
#include <array>
#include <vector>

namespace tessera::compute {
namespace {

bool IsIdentStart(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         c >= 0x80;
}
bool IsIdentChar(unsigned char c) {
  return IsIdentStart(c) || (c >= '0' && c <= '9');
}
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

Status At(std::string_view path, int line, const std::string& what) {
  return InvalidArgument(std::string(path) + ":" + std::to_string(line) + ": " +
                         what);
}

// The C and C++ standard library headers a module may include (libc++ and
// wasi-libc provide them). Threads, files and processes are left out: a
// module has none.
constexpr std::array<std::string_view, 94> kStandardHeaders = {
    // C++
    "algorithm", "any", "array", "bit", "bitset", "cassert", "cctype", "cerrno",
    "cfloat", "charconv", "cinttypes", "climits", "clocale", "cmath", "compare",
    "complex", "concepts", "cstdarg", "cstdbool", "cstddef", "cstdint",
    "cstdio", "cstdlib", "cstring", "ctime", "cuchar", "cwchar", "cwctype",
    "deque", "exception", "forward_list", "functional", "initializer_list",
    "iomanip", "ios", "iosfwd", "iostream", "istream", "iterator", "limits",
    "list", "locale", "map", "memory", "new", "numbers", "numeric", "optional",
    "ostream", "queue", "random", "ranges", "ratio", "set", "source_location",
    "span", "sstream", "stack", "stdexcept", "streambuf", "string",
    "string_view", "system_error", "tuple", "type_traits", "typeindex",
    "typeinfo", "unordered_map", "unordered_set", "utility", "valarray",
    "variant", "vector", "version",
    // C
    "assert.h", "ctype.h", "errno.h", "float.h", "inttypes.h", "limits.h",
    "locale.h", "math.h", "stdarg.h", "stdbool.h", "stddef.h", "stdint.h",
    "stdio.h", "stdlib.h", "string.h", "time.h", "uchar.h", "wchar.h",
    "wctype.h", "iso646.h"};

// ---------------------------------------------------------------- C++

struct LogicalLine {
  int line = 0;  // where it starts in the file
  std::string text;
};

// Translation phases 2 and 3, enough to find directives: backslash-newline
// splices joined, comments replaced by a space, literals kept whole (raw
// strings emptied). Also refuses inline assembly identifiers.
Result<std::vector<LogicalLine>> CppLines(std::string_view path,
                                          std::string_view content) {
  std::string s;
  std::vector<int> line_of;  // line of each byte of s
  s.reserve(content.size());
  line_of.reserve(content.size());
  int line = 1;
  for (size_t i = 0; i < content.size(); ++i) {
    if (content[i] == '\\') {
      size_t j = i + 1;
      if (j < content.size() && content[j] == '\r') ++j;
      if (j < content.size() && content[j] == '\n') {
        i = j;
        ++line;
        continue;
      }
    }
    s += content[i];
    line_of.push_back(line);
    if (content[i] == '\n') ++line;
  }
  std::vector<LogicalLine> out(1);
  out.back().line = 1;
  size_t i = 0;
  const auto line_at = [&](size_t k) {
    return k < line_of.size() ? line_of[k] : line;
  };
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    std::string& text = out.back().text;
    if (c == '\n') {
      out.push_back({line_at(i + 1), ""});
      ++i;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      const size_t end = s.find("*/", i + 2);
      if (end == std::string::npos) {
        return At(path, line_at(i), "unterminated /* comment");
      }
      text += ' ';
      i = end + 2;
    } else if (IsIdentStart(c)) {
      const size_t start = i;
      while (i < s.size() && IsIdentChar(static_cast<unsigned char>(s[i]))) {
        ++i;
      }
      const std::string_view ident(s.data() + start, i - start);
      if (ident == "asm" || ident == "__asm" || ident == "__asm__") {
        return At(path, line_at(start),
                  "inline assembly (`" + std::string(ident) +
                      "`) is not allowed in compute modules");
      }
      if (ident == "__has_include" || ident == "__has_include_next") {
        return At(path, line_at(start),
                  "`" + std::string(ident) +
                      "` is not allowed (it probes the build machine's "
                      "files)");
      }
      text += ident;
      const bool raw = !ident.empty() && ident.back() == 'R' &&
                       (ident == "R" || ident == "u8R" || ident == "uR" ||
                        ident == "UR" || ident == "LR");
      if (raw && i < s.size() && s[i] == '"') {
        const size_t open = s.find('(', i + 1);
        if (open == std::string::npos || open - i - 1 > 16) {
          return At(path, line_at(i), "malformed raw string literal");
        }
        const std::string close = ")" + s.substr(i + 1, open - i - 1) + "\"";
        const size_t end = s.find(close, open + 1);
        if (end == std::string::npos) {
          return At(path, line_at(i), "unterminated raw string literal");
        }
        text += "\"\"";
        i = end + close.size();
      }
    } else if (IsDigit(c) || (c == '.' && i + 1 < s.size() &&
                              IsDigit(static_cast<unsigned char>(s[i + 1])))) {
      // A pp-number, digit separators (1'000) and exponents (1e+5) included.
      const size_t start = i++;
      while (i < s.size()) {
        const unsigned char d = static_cast<unsigned char>(s[i]);
        const unsigned char prev = static_cast<unsigned char>(s[i - 1]);
        if (IsIdentChar(d) || d == '.') {
          ++i;
        } else if (d == '\'' && i + 1 < s.size() &&
                   IsIdentChar(static_cast<unsigned char>(s[i + 1]))) {
          i += 2;
        } else if ((d == '+' || d == '-') &&
                   (prev == 'e' || prev == 'E' || prev == 'p' || prev == 'P')) {
          ++i;
        } else {
          break;
        }
      }
      text.append(s, start, i - start);
    } else if (c == '"' || c == '\'') {
      const size_t start = i++;
      while (i < s.size() && s[i] != static_cast<char>(c)) {
        if (s[i] == '\n') {
          return At(path, line_at(start), "unterminated literal");
        }
        i += s[i] == '\\' ? 2 : 1;
      }
      if (i >= s.size())
        return At(path, line_at(start), "unterminated literal");
      ++i;
      text.append(s, start, i - start);
    } else {
      text += static_cast<char>(c);
      ++i;
    }
  }
  return out;
}

// `name` joined to the directory of `from`, "." and ".." resolved; empty
// when it climbs above the module's root.
std::string ResolveQuoted(std::string_view from, std::string_view name) {
  std::vector<std::string> parts;
  const size_t slash = from.rfind('/');
  std::string joined =
      slash == std::string_view::npos
          ? std::string(name)
          : std::string(from.substr(0, slash + 1)) + std::string(name);
  size_t start = 0;
  while (start <= joined.size()) {
    size_t end = joined.find('/', start);
    if (end == std::string::npos) end = joined.size();
    const std::string part = joined.substr(start, end - start);
    if (part == "..") {
      if (parts.empty()) return "";
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

// ---------------------------------------------------------------- Rust

constexpr std::array<std::string_view, 5> kRustForbidden = {
    "include", "include_str", "include_bytes", "env", "option_env"};

}  // namespace

bool IsAllowedStandardHeader(std::string_view name) {
  return std::find(kStandardHeaders.begin(), kStandardHeaders.end(), name) !=
         kStandardHeaders.end();
}

Status CheckCppSource(std::string_view path, std::string_view content,
                      const std::map<std::string, std::string>& files) {
  Result<std::vector<LogicalLine>> lines = CppLines(path, content);
  if (!lines.ok()) return lines.status();
  for (const LogicalLine& l : *lines) {
    std::string_view t = l.text;
    size_t i = t.find_first_not_of(" \t\r\f\v");
    if (i == std::string_view::npos) continue;
    if (t[i] == '#') {
      ++i;
    } else if (t.substr(i, 2) == "%:") {
      i += 2;
    } else {
      continue;
    }
    i = std::min(t.size(), t.find_first_not_of(" \t\r\f\v", i));
    size_t end = i;
    while (end < t.size() && IsIdentChar(static_cast<unsigned char>(t[end]))) {
      ++end;
    }
    const std::string_view directive = t.substr(i, end - i);
    if (directive == "include_next" || directive == "import" ||
        directive == "embed") {
      return At(path, l.line, "#" + std::string(directive) + " is not allowed");
    }
    if (directive != "include") continue;
    i = std::min(t.size(), t.find_first_not_of(" \t\r\f\v", end));
    const char open = i < t.size() ? t[i] : '\0';
    if (open != '<' && open != '"') {
      return At(path, l.line,
                "#include of a macro is not allowed (write <tessera/...>, a "
                "standard header or \"an uploaded file\")");
    }
    const size_t close = t.find(open == '<' ? '>' : '"', i + 1);
    if (close == std::string_view::npos) {
      return At(path, l.line, "malformed #include");
    }
    const std::string name(t.substr(i + 1, close - i - 1));
    if (t.find_first_not_of(" \t\r\f\v", close + 1) != std::string_view::npos) {
      return At(path, l.line, "unexpected text after #include");
    }
    if (name.empty() || name[0] == '/' ||
        name.find('\\') != std::string::npos) {
      return At(path, l.line,
                "#include \"" + name +
                    "\": absolute or backslash paths are "
                    "not allowed");
    }
    if (open == '<') {
      const bool sdk = name.rfind("tessera/", 0) == 0 && name.size() > 8 &&
                       name.find("..") == std::string::npos;
      if (!sdk && !IsAllowedStandardHeader(name)) {
        return At(path, l.line,
                  "#include <" + name +
                      "> is not allowed: only <tessera/...> (the SDK) and "
                      "the C/C++ standard library headers "
                      "(docs/compute-sources.md)");
      }
      continue;
    }
    const std::string resolved = ResolveQuoted(path, name);
    const bool uploaded = !resolved.empty() && files.count(resolved) != 0;
    // "tessera/..." not uploaded: the SDK, found on the include path.
    const bool sdk = name.rfind("tessera/", 0) == 0 && name.size() > 8 &&
                     name.find("..") == std::string::npos;
    if (!uploaded && !sdk) {
      return At(path, l.line,
                "#include \"" + name +
                    "\" does not name an uploaded file (or the SDK, "
                    "\"tessera/...\")");
    }
  }
  return Status::Ok();
}

Status CheckRustSource(std::string_view path, std::string_view s) {
  int line = 1;
  size_t i = 0;
  int attribute_depth = 0;  // brackets open inside #[...] / #![...]
  std::string prev;         // the previous token ("" at the start)
  std::string prev2;        // and the one before it
  const auto skip_to = [&](size_t end) {
    for (; i < end && i < s.size(); ++i) line += s[i] == '\n';
  };
  const auto string_end = [&](size_t from) -> size_t {  // after closing "
    for (size_t k = from; k < s.size(); ++k) {
      if (s[k] == '\\') {
        ++k;
      } else if (s[k] == '"') {
        return k + 1;
      }
    }
    return std::string_view::npos;
  };
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const int start_line = line;
    if (c == '\n' || c == ' ' || c == '\t' || c == '\r') {
      skip_to(i + 1);
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      size_t end = s.find('\n', i);
      skip_to(end == std::string_view::npos ? s.size() : end);
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {  // nested
      int depth = 0;
      size_t k = i;
      for (; k + 1 < s.size(); ++k) {
        if (s[k] == '/' && s[k + 1] == '*') {
          ++depth;
          ++k;
        } else if (s[k] == '*' && s[k + 1] == '/') {
          ++k;
          if (--depth == 0) break;
        }
      }
      if (depth != 0) return At(path, start_line, "unterminated /* comment");
      skip_to(k + 1);
      continue;
    }
    std::string token;
    if (IsIdentStart(c)) {
      size_t end = i;
      while (end < s.size() &&
             IsIdentChar(static_cast<unsigned char>(s[end]))) {
        ++end;
      }
      token = std::string(s.substr(i, end - i));
      const char next = end < s.size() ? s[end] : '\0';
      if ((token == "r" || token == "br" || token == "cr") &&
          (next == '"' || next == '#')) {
        size_t k = end;
        while (k < s.size() && s[k] == '#') ++k;
        if (k < s.size() && s[k] == '"') {  // raw string r#"..."#
          const std::string close = "\"" + std::string(k - end, '#');
          const size_t stop = s.find(close, k + 1);
          if (stop == std::string_view::npos) {
            return At(path, start_line, "unterminated raw string");
          }
          skip_to(stop + close.size());
          prev = "\"";
          continue;
        }
        if (token == "r" && k == end + 1 && k < s.size() &&
            IsIdentStart(static_cast<unsigned char>(s[k]))) {  // r#ident
          end = k;
          while (end < s.size() &&
                 IsIdentChar(static_cast<unsigned char>(s[end]))) {
            ++end;
          }
          token = std::string(s.substr(k, end - k));
        }
      } else if ((token == "b" || token == "c") && next == '"') {
        const size_t stop = string_end(end + 1);
        if (stop == std::string_view::npos) {
          return At(path, start_line, "unterminated string");
        }
        skip_to(stop);
        prev = "\"";
        continue;
      } else if (token == "b" && next == '\'') {
        i = end;  // the byte literal is read as a char literal below
        continue;
      }
      skip_to(end);
      if (std::find(kRustForbidden.begin(), kRustForbidden.end(), token) !=
          kRustForbidden.end()) {
        return At(path, start_line,
                  "`" + token +
                      "` is not allowed: compute modules cannot read the "
                      "build machine's files or environment (include!, "
                      "include_str!, include_bytes!, env!, option_env!)");
      }
      if (attribute_depth > 0 && token == "path") {
        return At(path, start_line,
                  "the #[path] attribute is not allowed (modules are the "
                  "uploaded src/**.rs files)");
      }
    } else if (IsDigit(c)) {
      size_t end = i;
      while (end < s.size() &&
             (IsIdentChar(static_cast<unsigned char>(s[end])) ||
              (s[end] == '.' && end + 1 < s.size() &&
               IsDigit(static_cast<unsigned char>(s[end + 1]))))) {
        ++end;
      }
      skip_to(end);
      token = "0";
    } else if (c == '"') {
      const size_t stop = string_end(i + 1);
      if (stop == std::string_view::npos) {
        return At(path, start_line, "unterminated string");
      }
      skip_to(stop);
      token = "\"";
    } else if (c == '\'') {
      // A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
      size_t k = i + 1;
      if (k < s.size() && s[k] == '\\') {
        const size_t stop = s.find('\'', k + 2);
        if (stop == std::string_view::npos) {
          return At(path, start_line, "unterminated character literal");
        }
        skip_to(stop + 1);
      } else {
        size_t len = 1;
        const unsigned char lead = k < s.size() ? s[k] : 0;
        if (lead >= 0xF0) {
          len = 4;
        } else if (lead >= 0xE0) {
          len = 3;
        } else if (lead >= 0xC0) {
          len = 2;
        }
        if (k + len < s.size() && s[k + len] == '\'') {
          skip_to(k + len + 1);
        } else {
          skip_to(k);  // a lifetime: its name is read as an identifier
        }
      }
      token = "'";
    } else {
      token = std::string(1, static_cast<char>(c));
      skip_to(i + 1);
      if (token == "[" && attribute_depth == 0 &&
          (prev == "#" || (prev == "!" && prev2 == "#"))) {
        attribute_depth = 1;
      } else if (token == "[" && attribute_depth > 0) {
        ++attribute_depth;
      } else if (token == "]" && attribute_depth > 0) {
        --attribute_depth;
      } else if (token == "$" && attribute_depth > 0) {
        return At(path, start_line,
                  "attributes built from macro arguments are not allowed");
      }
    }
    prev2 = std::move(prev);
    prev = std::move(token);
  }
  return Status::Ok();
}

}  // namespace tessera::compute
