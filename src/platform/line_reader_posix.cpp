// POSIX: the file is opened non-blocking, and a read with nothing to give
// waits in poll() for at most 100 ms before it looks at the stop flag again.
// "-" is standard input. A FIFO's end comes when a writer has been and
// gone: read() says 0 while none has opened it yet too, and then the reader
// waits for one (Linux's poll() reports POLLHUP only once a writer opened
// it after us and closed it).

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "platform/line_reader.h"

namespace etwaudit {

LineReader::LineReader(const std::string& path) {
  if (path == "-") {
    m_fd = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
    if (m_fd >= 0) ::fcntl(m_fd, F_SETFL, ::fcntl(m_fd, F_GETFL) | O_NONBLOCK);
  } else {
    m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  }
  if (m_fd < 0) {
    m_error = std::strerror(errno);
    return;
  }
  struct stat info {};
  m_fifo = path != "-" && ::fstat(m_fd, &info) == 0 && S_ISFIFO(info.st_mode);
}

LineReader::~LineReader() {
  if (m_fd >= 0) ::close(m_fd);
}

long LineReader::read_some(char* chunk, std::size_t size, const std::atomic<bool>& stop) {
  for (;;) {
    if (stop) return -1;
    const ssize_t got = ::read(m_fd, chunk, size);
    if (got == 0 && m_fifo && !m_writer_seen) {
      pollfd wait_for{m_fd, POLLIN, 0};
      // A writer came (and may have gone): what it wrote is read next, then the end.
      if (::poll(&wait_for, 1, 100) > 0 && (wait_for.revents & (POLLHUP | POLLIN))) m_writer_seen = true;
      continue;
    }
    if (got > 0) m_writer_seen = true;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      m_writer_seen = true;  // one has it open
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
