// POSIX: the file is opened non-blocking, and a read with nothing to give
// waits in poll() for at most 100 ms before it looks at the stop flag again.

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "platform/line_reader.h"

namespace etwaudit {

LineReader::LineReader(const std::string& path) {
  m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (m_fd < 0) m_error = std::strerror(errno);
}

LineReader::~LineReader() {
  if (m_fd >= 0) ::close(m_fd);
}

long LineReader::read_some(char* chunk, std::size_t size, const std::atomic<bool>& stop) {
  for (;;) {
    if (stop) return -1;
    const ssize_t got = ::read(m_fd, chunk, size);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd wait_for{m_fd, POLLIN, 0};
      ::poll(&wait_for, 1, 100);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) m_error = std::strerror(errno);
    return static_cast<long>(got);
  }
}

}  // namespace etwaudit
