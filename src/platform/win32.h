#pragma once
// Small Win32 helpers for the Windows files of every layer (Windows only):
// text conversion and error messages that name the failing call and its code.

#include <string>
#include <string_view>

namespace etwaudit {

// UTF-16 (Windows) to UTF-8 and back; invalid units become U+FFFD.
std::string to_utf8(std::wstring_view text);
std::wstring to_wide(std::string_view text);

// "OpenTraceW failed with error 5 (Access is denied.)": call, code and the
// system's text for the code, when it has one.
std::string win32_failure(std::string_view call, unsigned long code);

}  // namespace etwaudit
