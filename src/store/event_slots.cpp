#include "store/event_slots.h"

namespace etwaudit {
namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

}  // namespace

std::string event_table(int slot) {
  return std::string("events_") + static_cast<char>('0' + slot / 10) + static_cast<char>('0' + slot % 10);
}

std::string for_each_slot(const std::string& body, const std::string& separator) {
  std::string sql;
  for (int slot = 0; slot < event_slot_count; ++slot) {
    std::string copy = body;
    replace_all(copy, "{events}", event_table(slot));
    replace_all(copy, "{slot}", std::to_string(slot));
    sql += (slot ? separator : std::string()) + copy;
  }
  return sql;
}

}  // namespace etwaudit
