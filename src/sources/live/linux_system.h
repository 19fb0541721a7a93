#pragma once
// What the Linux live sources read of the running system: small files of
// /proc, links, user names. Plain syscalls: they run for every new process.

#include <cstdint>
#include <string>
#include <unordered_map>

namespace etwaudit::linux_system {

// A small file, whole (empty when it cannot be read).
std::string read_file(const std::string& path);
// Where a symbolic link points (empty when it cannot be read).
std::string read_link(const std::string& path);
// The name of a user id, or the number when it has none.
std::string user_name(std::uint32_t uid);
// user_name, each uid looked up once.
class UserNames {
 public:
  const std::string& operator()(std::uint32_t uid);

 private:
  std::unordered_map<std::uint32_t, std::string> m_names;
};
// uname's release ("6.1.0-18-amd64").
std::string kernel_release();
// "CALL failed: the error's text".
std::string errno_text(const char* call, int error);

}  // namespace etwaudit::linux_system
