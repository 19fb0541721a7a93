#include "platform/win32.h"

#include <windows.h>

namespace etwaudit {

std::string to_utf8(std::wstring_view text) {
  if (text.empty()) return {};
  const int size =
      WideCharToMultiByte(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<std::size_t>(size > 0 ? size : 0), '\0');
  if (size > 0)
    WideCharToMultiByte(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), out.data(), size, nullptr, nullptr);
  return out;
}

std::wstring to_wide(std::string_view text) {
  if (text.empty()) return {};
  const int size = MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), nullptr, 0);
  std::wstring out(static_cast<std::size_t>(size > 0 ? size : 0), L'\0');
  if (size > 0) MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), out.data(), size);
  return out;
}

std::string win32_failure(std::string_view call, unsigned long code) {
  std::string message = std::string(call) + " failed with error " + std::to_string(code);
  wchar_t* text = nullptr;
  DWORD length = 0;
  // English when the system has it (messages end up in logs and bug reports),
  // else the system's language.
  for (DWORD language : {DWORD(MAKELANGID(LANG_ENGLISH, SUBLANG_ENGLISH_US)), DWORD(0)}) {
    length = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                            nullptr, code, language, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
    if (length > 0) break;
  }
  if (length > 0 && text) {
    std::wstring_view view(text, length);
    while (!view.empty() && (view.back() == L'\r' || view.back() == L'\n' || view.back() == L' '))
      view.remove_suffix(1);
    if (!view.empty()) message += " (" + to_utf8(view) + ")";
  }
  if (text) LocalFree(text);
  return message;
}

}  // namespace etwaudit
