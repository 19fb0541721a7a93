#include "sources/live/etw_processes.h"

#include <windows.h>
// clang-format off: winternl.h needs windows.h first.
#include <sddl.h>
#include <winternl.h>
// clang-format on

#include <string_view>

#include "core/time_format.h"
#include "platform/win32.h"

namespace etwaudit {
namespace {

// PROCESSINFOCLASS ProcessCommandLineInformation (Windows 8.1 and later): a
// UNICODE_STRING whose text follows it in the same buffer.
constexpr ULONG process_command_line_information = 60;
constexpr LONG status_info_length_mismatch = static_cast<LONG>(0xC0000004);
// The longest command line Windows allows, in bytes, with the UNICODE_STRING.
constexpr std::size_t longest_command_line = sizeof(UNICODE_STRING) + 2 * 32768;

using QueryInformationProcess = LONG(NTAPI*)(HANDLE, ULONG, void*, ULONG, ULONG*);

// Closes a process or thread handle on every way out.
struct ProcessHandle {
  HANDLE handle;
  ~ProcessHandle() {
    if (handle) CloseHandle(handle);
  }
};

}  // namespace

RunningProcesses::RunningProcesses() : m_image(32768), m_command_line(4096) {
  if (HMODULE ntdll = GetModuleHandleW(L"ntdll.dll"))
    m_query_information_process = reinterpret_cast<void*>(GetProcAddress(ntdll, "NtQueryInformationProcess"));
}

std::string RunningProcesses::account_name(const std::string& sid) noexcept {
  try {
    if (const auto known = m_accounts.find(sid); known != m_accounts.end()) return known->second;
    std::string name;
    PSID binary = nullptr;
    if (ConvertStringSidToSidW(to_wide(sid).c_str(), &binary)) {
      wchar_t account[256], domain[256];
      DWORD account_size = 256, domain_size = 256;
      SID_NAME_USE use;
      if (LookupAccountSidW(nullptr, binary, account, &account_size, domain, &domain_size, &use))
        name = to_utf8(std::wstring(domain, domain_size) + L"\\" + std::wstring(account, account_size));
      LocalFree(binary);
    }
    m_accounts.emplace(sid, name);  // an unknown SID is asked once
    return name;
  } catch (...) {
    return {};
  }
}

std::uint32_t RunningProcesses::process_of_thread(std::uint32_t tid) noexcept {
  // A thread that is gone (or protected) stays so: asked again after a while
  // only, when its id may belong to a new thread.
  constexpr std::uint64_t retry_after_ms = 10'000;
  const std::uint64_t now = GetTickCount64();
  if (const auto failed = m_failed_threads.find(tid);
      failed != m_failed_threads.end() && now - failed->second < retry_after_ms)
    return 0;
  const ProcessHandle thread{OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, tid)};
  const std::uint32_t pid = thread.handle ? GetProcessIdOfThread(thread.handle) : 0;
  try {
    if (pid == 0) {
      if (m_failed_threads.size() > 65536) m_failed_threads.clear();  // bounded
      m_failed_threads[tid] = now;
    } else {
      m_failed_threads.erase(tid);
    }
  } catch (...) {  // out of memory: asked again next time
  }
  return pid;
}

bool RunningProcesses::lookup(std::uint32_t pid, ProcessInfo& info) noexcept {
  try {
    const ProcessHandle process{OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid)};
    if (!process.handle) return false;
    FILETIME created, exited, kernel, user;
    DWORD image_size = static_cast<DWORD>(m_image.size());
    if (!GetProcessTimes(process.handle, &created, &exited, &kernel, &user) ||
        !QueryFullProcessImageNameW(process.handle, 0, m_image.data(), &image_size))
      return false;
    info.pid = pid;
    info.start_time = unix_ns_from_filetime(ULARGE_INTEGER{{created.dwLowDateTime, created.dwHighDateTime}}.QuadPart);
    info.image = to_utf8(std::wstring_view(m_image.data(), image_size));
    info.command_line.clear();

    if (!m_query_information_process) return true;
    const auto query = reinterpret_cast<QueryInformationProcess>(m_query_information_process);
    ULONG needed = 0;
    LONG status = query(process.handle, process_command_line_information, m_command_line.data(),
                        static_cast<ULONG>(m_command_line.size()), &needed);
    if (status == status_info_length_mismatch && needed > m_command_line.size() && needed <= longest_command_line) {
      m_command_line.resize(needed);
      status = query(process.handle, process_command_line_information, m_command_line.data(),
                     static_cast<ULONG>(m_command_line.size()), &needed);
    }
    if (status >= 0) {  // NT_SUCCESS; Windows before 8.1 (and Wine 8) say STATUS_INVALID_INFO_CLASS
      const auto* text = reinterpret_cast<const UNICODE_STRING*>(m_command_line.data());
      if (text->Buffer && text->Length > 0)
        info.command_line = to_utf8(std::wstring_view(text->Buffer, text->Length / sizeof(wchar_t)));
    }
    return true;
  } catch (...) {  // out of memory: the process stays unnamed
    return false;
  }
}

}  // namespace etwaudit
