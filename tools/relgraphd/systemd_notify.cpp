#include "tools/relgraphd/systemd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

namespace relgraph {

Status NotifySystemd(std::string_view state) {
  const char* name = std::getenv("NOTIFY_SOCKET");
  if (name == nullptr || name[0] == '\0') return Status::OK();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const size_t length = std::strlen(name);
  if (length >= sizeof addr.sun_path) {
    return Status::InvalidArgument("NOTIFY_SOCKET '" + std::string(name) +
                                   "' is too long for a unix socket address");
  }
  std::memcpy(addr.sun_path, name, length);
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // the abstract namespace
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(Code::kUnavailable, std::string("socket: ") + std::strerror(errno));
  const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
  const ssize_t sent = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                              reinterpret_cast<const sockaddr*>(&addr), size);
  const int error = errno;
  close(fd);
  if (sent < 0) {
    return Status(Code::kUnavailable,
                  "notifying systemd at " + std::string(name) + ": " + std::strerror(error));
  }
  return Status::OK();
}

}  // namespace relgraph
