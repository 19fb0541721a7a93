#include "store/database_files.h"

#include <cerrno>
#include <system_error>

#include "core/error.h"

#ifdef _WIN32
#include <windows.h>
// after windows.h
#include <aclapi.h>

#include <vector>
#else
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#endif

namespace etwaudit {
namespace {

// The files SQLite keeps beside a database, by suffix.
constexpr const char* side_suffixes[] = {"-wal", "-shm", "-journal"};

[[noreturn]] void refuse(const std::string& database, const std::string& reason) {
  throw Error("cannot open database '" + database + "': " + reason);
}

}  // namespace

#ifdef _WIN32

namespace {

std::wstring to_wide(const std::string& text) {
  std::wstring wide(MultiByteToWideChar(CP_UTF8, 0, text.c_str(), -1, nullptr, 0), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, text.c_str(), -1, wide.data(), static_cast<int>(wide.size()));
  wide.resize(wide.empty() ? 0 : wide.size() - 1);
  return wide;
}

std::string windows_message(DWORD code) {
  return std::system_category().message(static_cast<int>(code));
}

// True when the process token is elevated (an administrator past UAC, or
// SYSTEM).
bool token_is_elevated(HANDLE token) {
  TOKEN_ELEVATION elevation{};
  DWORD size = 0;
  return GetTokenInformation(token, TokenElevation, &elevation, sizeof elevation, &size) && elevation.TokenIsElevated;
}

// The SID of the token's user, kept in buffer.
PSID token_user(HANDLE token, std::vector<unsigned char>& buffer) {
  DWORD size = 0;
  GetTokenInformation(token, TokenUser, nullptr, 0, &size);
  buffer.resize(size);
  if (size == 0 || !GetTokenInformation(token, TokenUser, buffer.data(), size, &size)) return nullptr;
  return reinterpret_cast<TOKEN_USER*>(buffer.data())->User.Sid;
}

// Owns what LocalAlloc returned.
struct LocalMemory {
  void* pointer = nullptr;
  ~LocalMemory() {
    if (pointer) LocalFree(pointer);
  }
};

// A DACL with full control for SYSTEM and Administrators and, when the process
// is not elevated, for its user: an elevated collector's database stays behind
// UAC like the event logs, while a user's own import stays readable by them.
void make_private_dacl(LocalMemory& dacl) {
  BYTE system_sid[SECURITY_MAX_SID_SIZE], administrators_sid[SECURITY_MAX_SID_SIZE];
  DWORD size = sizeof system_sid;
  if (!CreateWellKnownSid(WinLocalSystemSid, nullptr, system_sid, &size))
    throw std::system_error(static_cast<int>(GetLastError()), std::system_category());
  size = sizeof administrators_sid;
  if (!CreateWellKnownSid(WinBuiltinAdministratorsSid, nullptr, administrators_sid, &size))
    throw std::system_error(static_cast<int>(GetLastError()), std::system_category());
  std::vector<PSID> grantees{system_sid, administrators_sid};

  std::vector<unsigned char> user_buffer;
  HANDLE token = nullptr;
  if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token))
    throw std::system_error(static_cast<int>(GetLastError()), std::system_category());
  if (!token_is_elevated(token)) {
    PSID user = token_user(token, user_buffer);
    if (user && !EqualSid(user, system_sid)) grantees.push_back(user);
  }
  CloseHandle(token);

  std::vector<EXPLICIT_ACCESSW> entries;
  for (PSID sid : grantees) {
    EXPLICIT_ACCESSW entry{};
    entry.grfAccessPermissions = FILE_ALL_ACCESS;
    entry.grfAccessMode = SET_ACCESS;
    entry.grfInheritance = NO_INHERITANCE;
    entry.Trustee.TrusteeForm = TRUSTEE_IS_SID;
    entry.Trustee.TrusteeType = TRUSTEE_IS_UNKNOWN;
    entry.Trustee.ptstrName = static_cast<LPWSTR>(sid);
    entries.push_back(entry);
  }
  PACL acl = nullptr;
  DWORD result = SetEntriesInAclW(static_cast<ULONG>(entries.size()), entries.data(), nullptr, &acl);
  if (result != ERROR_SUCCESS) throw std::system_error(static_cast<int>(result), std::system_category());
  dacl.pointer = acl;
}

}  // namespace

bool create_private_file(const std::string& path) {
  LocalMemory dacl;
  make_private_dacl(dacl);
  SECURITY_DESCRIPTOR descriptor;
  InitializeSecurityDescriptor(&descriptor, SECURITY_DESCRIPTOR_REVISION);
  SetSecurityDescriptorDacl(&descriptor, TRUE, static_cast<PACL>(dacl.pointer), FALSE);
  // Protected: the folder's inheritable entries are not added to it.
  SetSecurityDescriptorControl(&descriptor, SE_DACL_PROTECTED, SE_DACL_PROTECTED);
  SECURITY_ATTRIBUTES attributes{sizeof attributes, &descriptor, FALSE};
  HANDLE file = CreateFileW(to_wide(path).c_str(), GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE,
                            &attributes, CREATE_NEW, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (file == INVALID_HANDLE_VALUE) {
    DWORD error = GetLastError();
    if (error == ERROR_FILE_EXISTS || error == ERROR_ALREADY_EXISTS) return false;
    // A folder at path: SQLite reports it in its own words.
    if (error == ERROR_ACCESS_DENIED && GetFileAttributesW(to_wide(path).c_str()) != INVALID_FILE_ATTRIBUTES)
      return false;
    throw std::system_error(static_cast<int>(error), std::system_category());
  }
  CloseHandle(file);
  return true;
}

void check_database_files(const std::string& path) {
  std::vector<std::string> files{path};
  for (const char* suffix : side_suffixes) files.push_back(path + suffix);
  for (const std::string& file : files) {
    DWORD attributes = GetFileAttributesW(to_wide(file).c_str());
    if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_REPARSE_POINT))
      refuse(path,
             "'" + file + "' is a link (reparse point): etwaudit writes only to the file itself (give its real path)");
  }
}

void protect_side_files(const std::string& path) {
  PACL dacl = nullptr;
  LocalMemory descriptor;
  DWORD result = GetNamedSecurityInfoW(to_wide(path).c_str(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr,
                                       nullptr, &dacl, nullptr, &descriptor.pointer);
  if (result != ERROR_SUCCESS)
    throw Error("cannot read the access list of database '" + path + "': " + windows_message(result));
  SECURITY_DESCRIPTOR_CONTROL control = 0;
  DWORD revision = 0;
  if (!GetSecurityDescriptorControl(descriptor.pointer, &control, &revision) || !(control & SE_DACL_PROTECTED) || !dacl)
    return;  // inherited from the folder, as the side files' will be
  for (const char* suffix : {"-wal", "-shm"}) {
    std::wstring file = to_wide(path + suffix);
    if (GetFileAttributesW(file.c_str()) == INVALID_FILE_ATTRIBUTES) continue;
    result = SetNamedSecurityInfoW(file.data(), SE_FILE_OBJECT,
                                   DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION, nullptr, nullptr,
                                   dacl, nullptr);
    if (result != ERROR_SUCCESS)
      throw Error("cannot give '" + path + suffix + "' the access list of database '" + path +
                  "': " + windows_message(result));
  }
}

#else

namespace {

std::string user_name(uid_t uid) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[1024];
  std::string number = std::to_string(uid);
  if (getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found)
    return found->pw_name + (" (" + number + ")");
  return "uid " + number;
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Refuses file (the database or one beside it) when it is not a regular file
// the effective user owns and only it can write.
void check_file(const std::string& database, const std::string& file, const struct stat& status) {
  if (S_ISLNK(status.st_mode))
    refuse(database, "'" + file + "' is a symbolic link: etwaudit writes only to the file itself (give its real path)");
  if (!S_ISREG(status.st_mode)) refuse(database, "'" + file + "' is not a regular file");
  if (status.st_uid != geteuid())
    refuse(database, "'" + file + "' belongs to " + user_name(status.st_uid) + ", not to " + user_name(geteuid()) +
                         " who runs etwaudit: a file another user made could have been planted there for it (move "
                         "it away, or chown it if it is yours)");
  const bool by_group = status.st_mode & S_IWGRP, by_others = status.st_mode & S_IWOTH;
  if (by_group || by_others)
    refuse(database, "'" + file + "' is writable by " +
                         (by_group && by_others ? "its group and every user"
                          : by_group            ? "its group"
                                                : "every user") +
                         " (mode " + octal_mode(status.st_mode) +
                         "), who could change or forge its records (remove that with chmod go-w)");
}

// Narrows side file to the database's permission bits. Opened without
// following links and compared with what lstat saw, so that chmod can only
// reach the file that was checked.
void narrow_mode(const std::string& database, const std::string& file, const struct stat& checked, mode_t allowed) {
  const mode_t wanted = checked.st_mode & allowed & 0777;
  int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat opened {};
  bool ok = fd >= 0 && ::fstat(fd, &opened) == 0 && opened.st_dev == checked.st_dev &&
            opened.st_ino == checked.st_ino && ::fchmod(fd, wanted) == 0;
  int error = errno;
  if (fd >= 0) ::close(fd);
  if (!ok)
    refuse(database,
           "'" + file + "' is readable by more users than the database (mode " + octal_mode(checked.st_mode) +
               ") and its mode cannot be narrowed to " + octal_mode(wanted) + ": " +
               (opened.st_ino && opened.st_ino != checked.st_ino ? "it was replaced meanwhile" : std::strerror(error)));
}

}  // namespace

bool create_private_file(const std::string& path) {
  // O_EXCL never follows a link at path (nor does O_NOFOLLOW): an existing
  // file, link or folder is left for check_database_files to judge.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw std::system_error(errno, std::generic_category());
  }
  // 0600 whatever the umask: a umask of 0200 would otherwise leave the owner
  // a file it cannot write.
  int result = ::fchmod(fd, 0600);
  int error = errno;
  ::close(fd);
  if (result != 0) {
    ::unlink(path.c_str());
    throw std::system_error(error, std::generic_category());
  }
  return true;
}

void check_database_files(const std::string& path) {
  struct stat database {};
  if (::lstat(path.c_str(), &database) != 0) refuse(path, std::strerror(errno));
  check_file(path, path, database);
  for (const char* suffix : side_suffixes) {
    const std::string file = path + suffix;
    struct stat side {};
    if (::lstat(file.c_str(), &side) != 0) {
      if (errno == ENOENT) continue;
      refuse(path, "cannot check '" + file + "': " + std::strerror(errno));
    }
    check_file(path, file, side);
    if (side.st_mode & 0777 & ~database.st_mode) narrow_mode(path, file, side, database.st_mode);
  }
}

void protect_side_files(const std::string&) {}

#endif

}  // namespace etwaudit
