#include "stream.h"

#include "core/file_event.h"

namespace bench {
namespace {

const char* const images[] = {"C:\\Windows\\System32\\svchost.exe",
                              "C:\\Windows\\explorer.exe",
                              "C:\\Program Files\\Microsoft SQL Server\\MSSQL16.MSSQLSERVER\\MSSQL\\Binn\\sqlservr.exe",
                              "C:\\ProgramData\\Microsoft\\Windows Defender\\Platform\\4.18.24090.11-0\\MsMpEng.exe",
                              "C:\\Program Files\\Microsoft Visual "
                              "Studio\\2022\\Community\\VC\\Tools\\MSVC\\14.40.33807\\bin\\Hostx64\\x64\\cl.exe",
                              "C:\\Program Files\\Git\\mingw64\\bin\\git.exe",
                              "C:\\Windows\\System32\\SearchIndexer.exe",
                              "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe",
                              "C:\\Windows\\System32\\lsass.exe",
                              "C:\\Program Files\\Microsoft Office\\root\\Office16\\OUTLOOK.EXE"};
const char* const shared_dirs[] = {"C:\\Windows\\System32\\",
                                   "C:\\Windows\\WinSxS\\amd64_microsoft.windows.common-controls\\",
                                   "C:\\Windows\\Fonts\\", "C:\\Windows\\System32\\config\\"};
const char* const shared_ext[] = {".dll", ".dll", ".ttf", ".LOG1"};
const char* const work_dirs[] = {"C:\\Users\\dev\\source\\repos\\project", "D:\\Data\\db", "C:\\ProgramData\\App\\logs",
                                 "C:\\Users\\dev\\AppData\\Local\\Temp\\build", "E:\\Share\\Projects\\Q"};
const char* const work_ext[] = {".cpp", ".mdf", ".log", ".obj", ".docx"};

}  // namespace

Stream::Stream(const StreamShape& shape)
    : m_shape(shape),
      m_random(shape.seed),
      m_shared_files(std::max<std::size_t>(1, shape.files / 100)),
      m_process_activity(shape.processes, 1.1),
      m_shared_popularity(m_shared_files, 1.2),
      m_own_popularity(std::max<std::size_t>(1, (shape.files - m_shared_files) / shape.processes), 0.9),
      m_time(1'764'670'400'000'000'000)  // 2025-12-02T10:13:20Z
{
  for (std::size_t i = 0; i < m_shared_files; ++i)
    m_paths.push_back(std::string(shared_dirs[i % 4]) + "module" + std::to_string(i) + shared_ext[i % 4]);
  for (std::size_t i = m_shared_files; i < shape.files; ++i) {
    const std::size_t owner = (i - m_shared_files) % shape.processes;
    m_paths.push_back(std::string(work_dirs[owner % 5]) + std::to_string(owner) + "\\src\\dir" +
                      std::to_string(i % 97) + "\\file" + std::to_string(i) + work_ext[owner % 5]);
  }
  for (std::size_t p = 0; p < shape.processes; ++p) {
    m_processes.push_back(StreamProcess{static_cast<std::uint32_t>(1000 + 4 * (m_random.below(15000))),
                                        m_time - static_cast<std::int64_t>(m_random.below(86'400)) * 1'000'000'000,
                                        images[p % 10]});
  }
}

void Stream::start_burst() {
  m_process = static_cast<std::uint32_t>(m_process_activity.sample(m_random));
  m_burst_left = m_random.geometric(64);
  m_run_left = 0;
}

void Stream::start_run() {
  if (m_random.uniform() < 0.1) {
    m_file = static_cast<std::uint32_t>(m_shared_popularity.sample(m_random));
  } else {
    // The process's own files are every processes()-th path after the shared ones.
    std::size_t own = m_own_popularity.sample(m_random);
    std::size_t index = m_shared_files + own * m_shape.processes + m_process;
    m_file = static_cast<std::uint32_t>(index < m_paths.size() ? index : m_process % m_shared_files);
  }
  m_run_left = m_random.geometric(8);
  m_run_op = m_random.uniform() < 0.7 ? 0 : 1;  // read or write run
  m_offset = static_cast<std::int64_t>(m_random.below(64)) * 65536;
  m_chunk = std::int64_t{4096} << m_random.below(5);
}

StreamEvent Stream::next() {
  if (m_burst_left == 0) start_burst();
  if (m_run_left == 0) start_run();
  --m_burst_left;
  --m_run_left;
  double rate = m_shape.rate;
  if (m_shape.daily_cycle) {
    constexpr double day = 86'400e9, pi = 3.14159265358979323846;
    const double phase = std::fmod(static_cast<double>(m_time), day) / day;  // 0 at midnight UTC
    rate *= 1.0 - 0.8 * std::cos(2 * pi * (phase - 0.125));                  // lowest at 03:00
  }
  m_time += 1 + static_cast<std::int64_t>(-std::log(1.0 - m_random.uniform()) * 1e9 / rate);
  StreamEvent event{m_time,  -1,
                    -1,      m_process,
                    m_file,  m_processes[m_process].pid + 4 + 4 * static_cast<std::uint32_t>(m_random.below(4)),
                    m_run_op};
  const double kind = m_random.uniform();
  if (kind < 0.88) {
    event.offset = m_offset;
    event.size = m_chunk;
    m_offset += m_chunk;
  } else if (kind < 0.93) {
    event.op = static_cast<std::uint8_t>(etwaudit::Op::open);
  } else if (kind < 0.97) {
    event.op = static_cast<std::uint8_t>(etwaudit::Op::close);
  } else if (kind < 0.99) {
    event.op = static_cast<std::uint8_t>(etwaudit::Op::set_info);
  } else {
    event.op = static_cast<std::uint8_t>(etwaudit::Op::flush);
  }
  return event;
}

}  // namespace bench
