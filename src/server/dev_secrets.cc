#include "server/dev_secrets.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <system_error>

#include "server/random_token.h"

namespace tessera::server {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr size_t kSecretBytes = 32;

Status WritePrivateFile(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return IoError("cannot create " + tmp.string() + ": " +
                   std::strerror(errno));
  }
  size_t written = 0;
  while (written < text.size()) {
    ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string error = std::strerror(errno);
      close(fd);
      return IoError("cannot write " + tmp.string() + ": " + error);
    }
    written += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    return IoError("cannot write " + tmp.string() + ": " +
                   std::strerror(errno));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec)
    return IoError("cannot rename to " + path.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

fs::path DevSecretsPath(const fs::path& app_dir) {
  return app_dir / kDevSecretsFile;
}

Result<DevSecrets> ReadDevSecrets(const fs::path& app_dir) {
  const fs::path path = DevSecretsPath(app_dir);
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound(path.string() + " does not exist");
  std::ifstream in(path);
  if (!in) return IoError("cannot open " + path.string());
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto field = [&](const char* name) -> std::string {
    if (!value.is_object()) return "";
    auto it = value.find(name);
    return it != value.end() && it->is_string() ? it->get<std::string>() : "";
  };
  DevSecrets secrets{field("ticketSecret"), field("adminToken")};
  if (secrets.ticket_secret.empty() || secrets.admin_token.empty()) {
    return InvalidArgument(path.string() +
                           ": expected {\"ticketSecret\": \"...\", "
                           "\"adminToken\": \"...\"}; delete it to generate "
                           "new ones");
  }
  return secrets;
}

Result<DevSecrets> LoadOrCreateDevSecrets(const fs::path& app_dir) {
  Result<DevSecrets> existing = ReadDevSecrets(app_dir);
  if (existing.ok() || existing.status().code() != StatusCode::kNotFound) {
    return existing;
  }
  Result<std::string> secret = RandomHex(kSecretBytes);
  if (!secret.ok()) return secret.status();
  Result<std::string> token = RandomHex(kSecretBytes);
  if (!token.ok()) return token.status();
  const fs::path path = DevSecretsPath(app_dir);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) {
    return IoError("cannot create " + path.parent_path().string() + ": " +
                   ec.message());
  }
  json value = {{"ticketSecret", *secret}, {"adminToken", *token}};
  TESSERA_RETURN_IF_ERROR(WritePrivateFile(path, value.dump(2) + "\n"));
  return DevSecrets{*secret, *token};
}

}  // namespace tessera::server
