#include "sources/live/ebpf_path_verdicts.h"

#include <algorithm>

#include "sources/live/ebpf/records.h"

namespace etwaudit {

EbpfPathVerdicts::EbpfPathVerdicts(SourcePathFilter filter) : m_filter(std::move(filter)) {
  if (!active()) return;
  auto fits = [](const std::string& prefix) { return !prefix.empty() && prefix.size() <= ETWAUDIT_PREFIX_MAX; };
  const auto& includes = m_filter.include_prefixes;
  // Every include glob or none: a path none of those given matches may
  // match one the program was not given.
  if (includes.size() <= ETWAUDIT_PREFIXES && std::all_of(includes.begin(), includes.end(), fits))
    m_prefixes = includes;
  m_includes = m_prefixes.size();
  std::size_t excludes = 0;
  for (const std::string& prefix : m_filter.exclude_prefixes)
    if (fits(prefix) && excludes < ETWAUDIT_PREFIXES) {
      m_prefixes.push_back(prefix);
      excludes += 1;
    }
}

bool EbpfPathVerdicts::kernel_leaves_out(std::string_view path) const {
  auto begins = [&](const std::string& prefix) { return path.substr(0, prefix.size()) == prefix; };
  const auto excludes_begin = m_prefixes.begin() + static_cast<std::ptrdiff_t>(m_includes);
  if (m_includes > 0 && std::none_of(m_prefixes.begin(), excludes_begin, begins)) return true;
  return std::any_of(excludes_begin, m_prefixes.end(), begins);
}

std::optional<EbpfPathVerdicts::Verdict> EbpfPathVerdicts::named(std::uint64_t dev, std::uint64_t ino,
                                                                 std::uint64_t open_seq, std::uint32_t path_id,
                                                                 const std::string& path) {
  if (!active()) return std::nullopt;
  if (path_id >= m_keeps.size()) m_keeps.resize(std::max<std::size_t>(path_id + 1, m_keeps.size() * 2), 0);
  if (m_keeps[path_id] == 0) m_keeps[path_id] = m_filter.keeps(path) ? 1 : -1;
  const bool left_out = m_keeps[path_id] < 0;
  auto [known, added] = m_in_kernel.try_emplace({dev, ino}, Verdict{open_seq, false});
  // A new open: the program judged it by its prefixes (a file named from
  // /proc has no verdict there yet).
  if (added || known->second.open_seq != open_seq) known->second = {open_seq, open_seq != 0 && kernel_leaves_out(path)};
  if (known->second.left_out == left_out) return std::nullopt;
  known->second.left_out = left_out;
  return known->second;
}

}  // namespace etwaudit
