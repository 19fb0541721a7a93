#include "platform/line_reader.h"

namespace etwaudit {

bool LineReader::next(std::string& line, const std::atomic<bool>& stop) {
  for (;;) {
    if (auto newline = m_buffer.find('\n', m_start); newline != std::string::npos) {
      line.assign(m_buffer, m_start, newline - m_start);
      m_start = newline + 1;
      return true;
    }
    m_buffer.erase(0, m_start);
    m_start = 0;
    if (m_eof) {
      if (m_buffer.empty()) return false;
      line.swap(m_buffer);
      m_buffer.clear();
      return true;
    }
    if (!fill(stop)) return false;
  }
}

bool LineReader::fill(const std::atomic<bool>& stop) {
  char chunk[65536];
  const long got = read_some(chunk, sizeof chunk, stop);
  if (got < 0) return false;
  if (got == 0) m_eof = true;
  m_buffer.append(chunk, static_cast<std::size_t>(got));
  return true;
}

}  // namespace etwaudit
