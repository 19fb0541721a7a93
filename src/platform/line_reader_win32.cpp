// Windows: plain _read in binary mode (replays come from files there), the
// file opened by its UTF-16 name; "-" is standard input.

#include <fcntl.h>
#include <io.h>

#include <cerrno>
#include <cstring>

#include "platform/line_reader.h"
#include "platform/win32.h"

namespace etwaudit {

LineReader::LineReader(const std::string& path) {
  if (path == "-") {
    m_fd = ::_dup(0);
    if (m_fd >= 0) ::_setmode(m_fd, _O_BINARY);
  } else {
    m_fd = ::_wopen(to_wide(path).c_str(), _O_RDONLY | _O_BINARY);  // by its UTF-16 name
  }
  if (m_fd < 0) m_error = std::strerror(errno);
}

LineReader::~LineReader() {
  if (m_fd >= 0) ::_close(m_fd);
}

long LineReader::read_some(char* chunk, std::size_t size, const std::atomic<bool>& stop) {
  if (stop) return -1;
  const int got = ::_read(m_fd, chunk, static_cast<unsigned>(size));
  if (got < 0) m_error = std::strerror(errno);
  return got;
}

}  // namespace etwaudit
