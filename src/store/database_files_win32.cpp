// Database files on Windows: a protected DACL for the database and its
// side files; links (reparse points) refused.

#include <windows.h>
// after windows.h
#include <aclapi.h>

#include <cerrno>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "platform/win32.h"
#include "store/database_files.h"
#include "store/database_files_shared.h"

namespace etwaudit {

using database_files_detail::refuse;
using database_files_detail::side_suffixes;

namespace {

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

}  // namespace etwaudit
