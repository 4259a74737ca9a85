#include "server/port_probe.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tessera::server {

Status ProbeBind(const std::string& host, uint16_t port) {
  if (port == 0) return Status::Ok();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string where = host + ":" + std::to_string(port);
  const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(),
                             std::to_string(port).c_str(), &hints, &found);
  if (rc != 0) {
    return IoError("cannot bind " + where + ": " + gai_strerror(rc));
  }
  Status result = IoError("cannot bind " + where + ": no address");
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    const bool bound =
        bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 1) == 0;
    const int error = errno;
    close(fd);
    if (bound) {
      result = Status::Ok();
      break;
    }
    result =
        error == EADDRINUSE
            ? IoError("port " + std::to_string(port) + " on " + host +
                      " is taken (another tessera?): pick another with "
                      "--port N or TESSERA_PORT (make dev PORT=N)")
            : IoError("cannot bind " + where + ": " + std::strerror(error));
  }
  freeaddrinfo(found);
  return result;
}

}  // namespace tessera::server
