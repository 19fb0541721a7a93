#pragma once
// RunningProcesses: the ProcessLookup of the live ETW collector. It asks
// Windows about a process by pid: OpenProcess with the least access that
// reads a process's times and image (PROCESS_QUERY_LIMITED_INFORMATION),
// GetProcessTimes for its creation time, QueryFullProcessImageNameW for the
// Win32 path of its image, and, from Windows 8.1 on, NtQueryInformationProcess
// (ProcessCommandLineInformation) for its command line. Protected processes,
// and processes that have gone, cannot be asked (doc/etw-format.md §5.3). The
// process of a thread no event placed: OpenThread and GetProcessIdOfThread.
// The account of a SID: LookupAccountSidW.
//
// Used on the decoder's thread only, never ProcessTrace's (etw_live_source.h):
// each call may wait. The decoder asks once per pid; a thread that could not
// be opened is not asked about again for a while.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sources/etw/decoder.h"

namespace etwaudit {

class RunningProcesses final : public ProcessLookup {
 public:
  RunningProcesses();
  bool lookup(std::uint32_t pid, ProcessInfo& info) noexcept override;
  // OpenThread + GetProcessIdOfThread.
  std::uint32_t process_of_thread(std::uint32_t tid) noexcept override;
  // LookupAccountSidW, once per SID.
  std::string account_name(const std::string& sid) noexcept override;

 private:
  std::vector<wchar_t> m_image;                                       // QueryFullProcessImageNameW's answer
  std::vector<unsigned char> m_command_line;                          // NtQueryInformationProcess's answer
  void* m_query_information_process = nullptr;                        // ntdll's NtQueryInformationProcess
  std::unordered_map<std::string, std::string> m_accounts;            // SID -> DOMAIN\\user ("" when unknown)
  std::unordered_map<std::uint32_t, std::uint64_t> m_failed_threads;  // tid -> GetTickCount64 when it failed
};

}  // namespace etwaudit
