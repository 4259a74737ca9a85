#include "app/depfile.h"

#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

namespace tessera::app {
namespace fs = std::filesystem;

bool ReadDepfile(const fs::path& file, std::vector<fs::path>* deps) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  std::vector<std::string> tokens;
  std::string token;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      char next = text[i + 1];
      if (next == '\n') {  // line continuation
        ++i;
        c = ' ';
      } else if (next == ' ' || next == '\\' || next == '#') {
        token += next;
        ++i;
        continue;
      }
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!token.empty()) tokens.push_back(std::move(token));
      token.clear();
    } else {
      token += c;
    }
  }
  if (!token.empty()) tokens.push_back(std::move(token));
  bool after_target = false;
  for (std::string& t : tokens) {
    if (!after_target) {
      after_target = t.back() == ':';
      continue;
    }
    deps->emplace_back(std::move(t));
  }
  return after_target;
}

bool NewerThanInputs(const fs::path& target, std::vector<fs::path> inputs,
                     const std::vector<fs::path>& depfiles) {
  std::error_code ec;
  const fs::file_time_type built = fs::last_write_time(target, ec);
  if (ec) return false;
  for (const fs::path& d : depfiles) {
    if (!ReadDepfile(d, &inputs)) return false;
  }
  for (const fs::path& input : inputs) {
    const fs::file_time_type t = fs::last_write_time(input, ec);
    if (ec || t > built) return false;
  }
  return true;
}

}  // namespace tessera::app
