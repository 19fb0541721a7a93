#include "sources/live/linux_system.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstring>

namespace etwaudit::linux_system {

std::string read_file(const std::string& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  for (ssize_t length; (length = ::read(fd, buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<std::size_t>(length));
  ::close(fd);
  return text;
}

std::string read_link(const std::string& path) {
  char buffer[4096];
  const ssize_t length = ::readlink(path.c_str(), buffer, sizeof buffer);
  return length > 0 ? std::string(buffer, static_cast<std::size_t>(length)) : std::string();
}

std::string user_name(std::uint32_t uid) {
  passwd entry{};
  passwd* result = nullptr;
  char buffer[4096];
  return ::getpwuid_r(uid, &entry, buffer, sizeof buffer, &result) == 0 && result ? std::string(result->pw_name)
                                                                                  : std::to_string(uid);
}

const std::string& UserNames::operator()(std::uint32_t uid) {
  auto found = m_names.find(uid);
  if (found == m_names.end()) found = m_names.emplace(uid, user_name(uid)).first;
  return found->second;
}

std::string kernel_release() {
  struct utsname name {};
  return ::uname(&name) == 0 ? name.release : "unknown";
}

std::string errno_text(const char* call, int error) {
  return std::string(call) + " failed: " + std::strerror(error);
}

}  // namespace etwaudit::linux_system
