#pragma once
// LineReader: a file read line by line with plain reads, so that a replay
// from a pipe or FIFO that is waiting for data still notices a stop request.
// The reading itself is the OS's: line_reader_posix.cpp (non-blocking reads,
// poll) or line_reader_win32.cpp, chosen by CMake.

#include <atomic>
#include <cstddef>
#include <string>

namespace etwaudit {

class LineReader {
 public:
  // path "-": standard input.
  explicit LineReader(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  bool is_open() const { return m_fd >= 0; }
  // Why the file could not be opened or read; empty when it could.
  const std::string& error() const { return m_error; }

  // The next line without its '\n'; false at the end of input, on an error
  // (see error()) or when stop became true while waiting for input.
  bool next(std::string& line, const std::atomic<bool>& stop);

 private:
  // Appends what the file has next to m_buffer (m_eof at its end); false on
  // an error or when stop became true while waiting.
  bool fill(const std::atomic<bool>& stop);
  // The OS's part of fill(): reads up to size bytes into chunk, waiting for
  // them as long as stop stays false. The bytes read (0 at the end), or -1 on
  // an error (m_error says which) or a stop.
  long read_some(char* chunk, std::size_t size, const std::atomic<bool>& stop);

  int m_fd = -1;
  std::string m_error;      // why the file could not be opened or read
  std::string m_buffer;     // bytes read but not yet returned
  std::size_t m_start = 0;  // where the next line starts in m_buffer
  bool m_eof = false;
  bool m_fifo = false;         // a named pipe: its end is a writer that came and went
  bool m_writer_seen = false;  // one has had it open
};

}  // namespace etwaudit
