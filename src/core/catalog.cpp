#include "core/catalog.h"

#include <stdexcept>
#include <utility>

namespace etwaudit {

Catalog::Catalog() {
  m_paths.emplace_back();
  m_file_keys.push_back(0);
  m_path_ids.emplace(std::string(), 0);
  m_processes.emplace_back();
}

std::uint32_t Catalog::intern_path(std::string_view path) {
  if (auto found = m_path_ids.find(path); found != m_path_ids.end()) return found->second;
  std::lock_guard lock(m_mutex);
  const auto id = static_cast<std::uint32_t>(m_paths.size());
  m_paths.emplace_back(path);
  m_file_keys.push_back(0);
  m_path_ids.emplace(std::string(path), id);
  return id;
}

std::uint32_t Catalog::intern_file_key(std::uint64_t key) {
  if (key == 0) return 0;
  if (auto found = m_unresolved_keys.find(key); found != m_unresolved_keys.end()) return found->second;
  std::lock_guard lock(m_mutex);
  const auto id = static_cast<std::uint32_t>(m_paths.size());
  m_paths.emplace_back();
  m_file_keys.push_back(key);
  m_unresolved_keys.emplace(key, id);
  return id;
}

void Catalog::resolve_file_key(std::uint64_t key, std::string_view name) {
  if (name.empty()) return;
  const auto found = m_unresolved_keys.find(key);
  if (found == m_unresolved_keys.end()) return;
  const std::uint32_t id = found->second;
  m_unresolved_keys.erase(found);
  {
    std::lock_guard lock(m_mutex);
    m_paths[id] = name;
    m_resolutions.push_back(Resolution{id, std::string(name)});
  }
  // Later events that name the file directly then share the entry the
  // earlier ones were stored under.
  if (m_path_ids.find(name) == m_path_ids.end()) m_path_ids.emplace(std::string(name), id);
}

void Catalog::forget_file_key(std::uint64_t key) {
  m_unresolved_keys.erase(key);
}

std::uint32_t Catalog::intern_process(std::uint32_t pid, std::int64_t start_time, std::string_view image,
                                      std::string_view command_line) {
  ProcessInfo info;
  info.pid = pid;
  info.start_time = start_time;
  info.image = image;
  info.command_line = command_line;
  return intern_process(info);
}

std::uint32_t Catalog::intern_process(const ProcessInfo& info) {
  m_process_key.clear();
  m_process_key.append(reinterpret_cast<const char*>(&info.pid), sizeof info.pid);
  m_process_key.append(reinterpret_cast<const char*>(&info.start_time), sizeof info.start_time);
  m_process_key.append(info.image);
  if (auto found = m_process_ids.find(m_process_key); found != m_process_ids.end()) return found->second;
  std::lock_guard lock(m_mutex);
  const auto id = static_cast<std::uint32_t>(m_processes.size());
  m_processes.push_back(info);
  m_process_ids.emplace(m_process_key, id);
  return id;
}

std::string Catalog::path(std::uint32_t id) const {
  std::lock_guard lock(m_mutex);
  if (id >= m_paths.size()) throw std::out_of_range("unknown path id " + std::to_string(id));
  return m_paths[id];
}

std::uint64_t Catalog::file_key(std::uint32_t id) const {
  std::lock_guard lock(m_mutex);
  if (id >= m_file_keys.size()) throw std::out_of_range("unknown path id " + std::to_string(id));
  return m_file_keys[id];
}

void Catalog::learn_command_line(std::uint32_t process_id, std::string_view command_line) {
  if (command_line.empty()) return;
  std::lock_guard lock(m_mutex);
  if (process_id >= m_processes.size() || !m_processes[process_id].command_line.empty()) return;
  m_processes[process_id].command_line = command_line;
  m_learned.push_back(process_id);
}

std::vector<std::uint32_t> Catalog::take_learned_command_lines() {
  std::lock_guard lock(m_mutex);
  return std::exchange(m_learned, {});
}

ProcessInfo Catalog::process(std::uint32_t id) const {
  std::lock_guard lock(m_mutex);
  if (id >= m_processes.size()) throw std::out_of_range("unknown process id " + std::to_string(id));
  return m_processes[id];
}

std::size_t Catalog::path_count() const {
  std::lock_guard lock(m_mutex);
  return m_paths.size();
}

std::size_t Catalog::process_count() const {
  std::lock_guard lock(m_mutex);
  return m_processes.size();
}

std::vector<Resolution> Catalog::take_resolutions() {
  std::vector<Resolution> taken;
  std::lock_guard lock(m_mutex);
  taken.swap(m_resolutions);
  return taken;
}

}  // namespace etwaudit
