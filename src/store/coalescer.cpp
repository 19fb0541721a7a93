#include "store/coalescer.h"

#include <algorithm>

namespace etwaudit {

std::size_t Coalescer::KeyHash::operator()(const Key& key) const noexcept {
  std::uint64_t h = (static_cast<std::uint64_t>(key.process) << 32 | key.path) * 0x9E3779B97F4A7C15ull;
  h ^= (static_cast<std::uint64_t>(key.status) << 9 | static_cast<std::uint64_t>(key.op) << 1 | key.sized) + (h >> 29);
  return static_cast<std::size_t>(h);
}

void Coalescer::close_before(std::int64_t time, std::vector<FileEvent>& ready) {
  while (!m_open.empty() && m_open.front().time < time) {
    const FileEvent& group = m_open.front();
    const Key key{group.process, group.path,         group.op,        group.size >= 0,
                  group.status,  group.renamed_from, group.renamed_to};
    auto found = m_index.find(key);
    if (found != m_index.end() && found->second == m_first_index) m_index.erase(found);
    m_held_events -= group.count;
    ready.push_back(group);
    m_open.pop_front();
    ++m_first_index;
  }
}

void Coalescer::add(std::vector<FileEvent>& batch, std::vector<FileEvent>& ready) {
  auto by_time = [](const FileEvent& a, const FileEvent& b) { return a.time < b.time; };
  if (!std::is_sorted(batch.begin(), batch.end(), by_time)) std::stable_sort(batch.begin(), batch.end(), by_time);
  for (const FileEvent& event : batch) {
    if (m_newest != INT64_MIN && event.time < m_newest - m_window) {
      ready.push_back(event);  // late: its group, if any, is gone
      continue;
    }
    m_newest = std::max(m_newest, event.time);
    close_before(m_newest - m_window, ready);
    const Key key{event.process, event.path,         event.op,        event.size >= 0,
                  event.status,  event.renamed_from, event.renamed_to};
    auto [found, inserted] = m_index.try_emplace(key, m_first_index + m_open.size());
    m_held_events += event.count;
    if (inserted) {
      m_open.push_back(event);
      continue;
    }
    FileEvent& group = m_open[found->second - m_first_index];
    group.count += event.count;
    if (event.size >= 0) group.size += event.size;
    group.end_offset = event.end_offset >= 0                  ? event.end_offset
                       : event.offset >= 0 && event.size >= 0 ? event.offset + event.size
                                                              : -1;
  }
  close_before(m_newest == INT64_MIN ? INT64_MIN : m_newest - m_window, ready);
}

void Coalescer::flush(std::vector<FileEvent>& ready) {
  ready.insert(ready.end(), m_open.begin(), m_open.end());
  m_first_index += m_open.size();
  m_open.clear();
  m_index.clear();
  m_held_events = 0;
}

}  // namespace etwaudit
