// Windows: plain _read in binary mode (replays come from files there).

#include <fcntl.h>
#include <io.h>

#include <cerrno>
#include <cstring>

#include "platform/line_reader.h"

namespace etwaudit {

LineReader::LineReader(const std::string& path) {
  m_fd = ::_open(path.c_str(), _O_RDONLY | _O_BINARY);
  if (m_fd < 0) m_error = std::strerror(errno);
}

LineReader::~LineReader() {
  if (m_fd >= 0) ::_close(m_fd);
}

bool LineReader::fill(const std::atomic<bool>& stop) {
  char chunk[65536];
  if (stop) return false;
  const int got = ::_read(m_fd, chunk, sizeof chunk);
  if (got < 0) {
    m_error = std::strerror(errno);
    return false;
  }
  if (got == 0) m_eof = true;
  m_buffer.append(chunk, static_cast<std::size_t>(got));
  return true;
}

}  // namespace etwaudit
