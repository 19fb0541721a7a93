// Who may open a database the writer creates on Windows: its DACL, and the
// DACL its -wal and -shm get. Wine (8.0, as Debian 12 ships it) keeps no DACL:
// it turns the one a file is created with into Unix mode bits and makes one up
// from those when asked, never protected and with no Administrators entry. So
// under Wine these tests check what survives that round trip (nobody but the
// owner, no Everyone entry) and say what they cannot check.
#include <windows.h>
// after windows.h
#include <aclapi.h>
#include <sddl.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "platform/platform.h"
#include "store/database.h"
#include "temp_dir.h"

using namespace etwaudit;
using etwaudit::test::TempDir;

namespace {

std::wstring widen(const std::string& text) {
  return std::wstring(text.begin(), text.end());  // temp paths here are ASCII
}

struct Access {
  bool protected_dacl = false;    // SE_DACL_PROTECTED: the folder's entries are not inherited
  std::vector<std::string> sids;  // the SIDs of the allow entries, in order
  std::vector<DWORD> masks;       // their access masks
  int other_entries = 0;          // entries that are not access-allowed ones
};

Access access_of(const std::string& path) {
  PACL dacl = nullptr;
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  DWORD result = GetNamedSecurityInfoW(widen(path).c_str(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr,
                                       &dacl, nullptr, &descriptor);
  REQUIRE(result == ERROR_SUCCESS);
  Access access;
  SECURITY_DESCRIPTOR_CONTROL control = 0;
  DWORD revision = 0;
  REQUIRE(GetSecurityDescriptorControl(descriptor, &control, &revision));
  access.protected_dacl = control & SE_DACL_PROTECTED;
  for (DWORD i = 0; dacl && i < dacl->AceCount; ++i) {
    void* entry = nullptr;
    REQUIRE(GetAce(dacl, i, &entry));
    auto* header = static_cast<ACE_HEADER*>(entry);
    if (header->AceType != ACCESS_ALLOWED_ACE_TYPE) {
      ++access.other_entries;
      continue;
    }
    auto* allowed = static_cast<ACCESS_ALLOWED_ACE*>(entry);
    LPSTR text = nullptr;
    REQUIRE(ConvertSidToStringSidA(&allowed->SidStart, &text));
    access.sids.push_back(text);
    access.masks.push_back(allowed->Mask);
    LocalFree(text);
  }
  LocalFree(descriptor);
  return access;
}

std::string current_user_sid() {
  HANDLE token = nullptr;
  REQUIRE(OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token));
  DWORD size = 0;
  GetTokenInformation(token, TokenUser, nullptr, 0, &size);
  std::vector<unsigned char> buffer(size);
  REQUIRE(GetTokenInformation(token, TokenUser, buffer.data(), size, &size));
  CloseHandle(token);
  LPSTR text = nullptr;
  REQUIRE(ConvertSidToStringSidA(reinterpret_cast<TOKEN_USER*>(buffer.data())->User.Sid, &text));
  std::string sid = text;
  LocalFree(text);
  return sid;
}

// SYSTEM and Administrators, and the user when the process is not elevated.
std::vector<std::string> expected_sids() {
  std::vector<std::string> sids{"S-1-5-18", "S-1-5-32-544"};
  if (!is_elevated() && current_user_sid() != "S-1-5-18") sids.push_back(current_user_sid());
  return sids;
}

bool running_under_wine() {
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  return ntdll && GetProcAddress(ntdll, "wine_get_version");
}

bool contains(const std::vector<std::string>& sids, const std::string& sid) {
  return std::find(sids.begin(), sids.end(), sid) != sids.end();
}

// Everyone, Users, Authenticated Users: what a folder's inherited DACL may grant.
void check_no_broad_entry(const Access& access) {
  for (const char* broad : {"S-1-1-0", "S-1-5-32-545", "S-1-5-11"}) {
    INFO(broad);
    CHECK_FALSE(contains(access.sids, broad));
  }
}

}  // namespace

TEST_CASE("a database the writer creates gets a protected DACL for SYSTEM, Administrators and a non-elevated user",
          "[database][protection]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  { WriteDatabase database(path); }
  Access access = access_of(path);
  check_no_broad_entry(access);
  if (running_under_wine()) {
    // A file made without a DACL: Wine grants Everyone read from its 0644 mode.
    const auto plain = dir.file("plain.txt");
    HANDLE file = CreateFileW(widen(plain).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW, 0, nullptr);
    REQUIRE(file != INVALID_HANDLE_VALUE);
    CloseHandle(file);
    CHECK(contains(access_of(plain).sids, "S-1-1-0"));
    WARN("Wine keeps no DACL: the protected flag and the Administrators entry cannot be checked here");
    return;
  }
  CHECK(access.protected_dacl);
  CHECK(access.sids == expected_sids());
  for (DWORD mask : access.masks) CHECK(mask == FILE_ALL_ACCESS);
  CHECK(access.other_entries == 0);
}

TEST_CASE("the -wal and -shm of a protected database get its DACL, not the folder's", "[database][protection]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  WriteDatabase database(path);
  database.db().exec("CREATE TABLE scratch (x); INSERT INTO scratch VALUES (1)");
  if (running_under_wine()) {
    // The database's DACL reads back unprotected, so there is nothing to copy.
    WARN("Wine keeps no DACL: what the -wal and -shm get cannot be checked here");
    return;
  }
  for (const char* suffix : {"-wal", "-shm"}) {
    INFO(path + suffix);
    Access access = access_of(path + suffix);
    CHECK(access.protected_dacl);
    CHECK(access.sids == expected_sids());
    check_no_broad_entry(access);
  }
}

TEST_CASE("an existing database keeps the access it was given", "[database][protection]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  { SQLite::Database made_elsewhere(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE); }
  const Access before = access_of(path);
  { WriteDatabase database(path); }
  const Access after = access_of(path);
  CHECK(after.protected_dacl == before.protected_dacl);
  CHECK(after.sids == before.sids);
  CHECK(after.masks == before.masks);
}
