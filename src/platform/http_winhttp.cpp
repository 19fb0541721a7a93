// platform/http.h with WinHTTP, the HTTP client in every Windows: HTTPS with
// the system's certificate store and the machine's proxy settings
// (WINHTTP_ACCESS_TYPE_DEFAULT_PROXY), nothing to install beside etwaudit.

#include "platform/http.h"

#include <wincrypt.h>
#include <windows.h>
#include <winhttp.h>

#include <string>
#include <vector>

#include "platform/win32.h"

namespace etwaudit {
namespace {

// A WinHTTP handle, closed when it goes.
struct Handle {
  HINTERNET handle = nullptr;
  explicit Handle(HINTERNET h) : handle(h) {}
  ~Handle() {
    if (handle) WinHttpCloseHandle(handle);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  explicit operator bool() const { return handle != nullptr; }
};

// "WinHttpSendRequest failed with error 12029 (...)": WinHTTP's own codes
// have their text in winhttp.dll, not in the system's table.
std::string failure(const char* call) {
  const DWORD code = GetLastError();
  wchar_t* text = nullptr;
  const DWORD length =
      FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_HMODULE | FORMAT_MESSAGE_IGNORE_INSERTS,
                     GetModuleHandleW(L"winhttp.dll"), code, 0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  if (length == 0 || !text) return win32_failure(call, code);
  std::string message = to_utf8(std::wstring_view(text, length));
  LocalFree(text);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r' || message.back() == ' '))
    message.pop_back();
  return std::string(call) + " failed with error " + std::to_string(code) + " (" + message + ")";
}

// "Basic base64(user:password)".
std::wstring basic_authorization(const HttpCredentials& credentials) {
  const std::string pair = credentials.user + ":" + credentials.password;
  DWORD size = 0;
  const auto* bytes = reinterpret_cast<const BYTE*>(pair.data());
  const DWORD flags = CRYPT_STRING_BASE64 | CRYPT_STRING_NOCRLF;
  if (!CryptBinaryToStringW(bytes, static_cast<DWORD>(pair.size()), flags, nullptr, &size)) return {};
  std::wstring encoded(size, L'\0');
  if (!CryptBinaryToStringW(bytes, static_cast<DWORD>(pair.size()), flags, encoded.data(), &size)) return {};
  encoded.resize(size);
  return L"Authorization: Basic " + encoded + L"\r\n";
}

}  // namespace

bool http_available() {
  return true;
}

HttpResponse http_post(const std::string& url, const std::string& text, const HttpCredentials& credentials,
                       std::chrono::seconds timeout, bool gzip) {
  HttpResponse response;
  std::string compressed;
  if (gzip) {
    compressed = gzip_compress(text);
    if (compressed.empty() && !text.empty()) {
      response.error = "cannot compress the request (zlib)";
      return response;
    }
  }
  const std::string& body = gzip ? compressed : text;

  std::wstring wide_url = to_wide(url);
  URL_COMPONENTS parts{};
  parts.dwStructSize = sizeof parts;
  parts.dwHostNameLength = parts.dwUrlPathLength = parts.dwExtraInfoLength = static_cast<DWORD>(-1);
  if (!WinHttpCrackUrl(wide_url.c_str(), 0, 0, &parts)) {
    response.error = failure("WinHttpCrackUrl");
    return response;
  }
  const std::wstring host(parts.lpszHostName, parts.dwHostNameLength);
  std::wstring path(parts.lpszUrlPath, parts.dwUrlPathLength);
  path.append(parts.lpszExtraInfo, parts.dwExtraInfoLength);
  if (path.empty()) path = L"/";

  Handle session(
      WinHttpOpen(L"etwaudit", WINHTTP_ACCESS_TYPE_DEFAULT_PROXY, WINHTTP_NO_PROXY_NAME, WINHTTP_NO_PROXY_BYPASS, 0));
  if (!session) {
    response.error = failure("WinHttpOpen");
    return response;
  }
  const int wait = static_cast<int>(timeout.count() * 1000);
  WinHttpSetTimeouts(session.handle, 10000, 10000, wait, wait);
  Handle connection(WinHttpConnect(session.handle, host.c_str(), parts.nPort, 0));
  if (!connection) {
    response.error = failure("WinHttpConnect");
    return response;
  }
  Handle request(WinHttpOpenRequest(connection.handle, L"POST", path.c_str(), nullptr, WINHTTP_NO_REFERER,
                                    WINHTTP_DEFAULT_ACCEPT_TYPES,
                                    parts.nScheme == INTERNET_SCHEME_HTTPS ? WINHTTP_FLAG_SECURE : 0));
  if (!request) {
    response.error = failure("WinHttpOpenRequest");
    return response;
  }
  std::wstring headers = L"Content-Type: text/plain; charset=utf-8\r\n";
  if (gzip) headers += L"Content-Encoding: gzip\r\n";
  if (!credentials.user.empty()) headers += basic_authorization(credentials);
  if (!WinHttpSendRequest(request.handle, headers.c_str(), static_cast<DWORD>(headers.size()),
                          const_cast<char*>(body.data()), static_cast<DWORD>(body.size()),
                          static_cast<DWORD>(body.size()), 0)) {
    response.error = failure("WinHttpSendRequest");
    return response;
  }
  if (!WinHttpReceiveResponse(request.handle, nullptr)) {
    response.error = failure("WinHttpReceiveResponse");
    return response;
  }
  DWORD status = 0, size = sizeof status;
  if (!WinHttpQueryHeaders(request.handle, WINHTTP_QUERY_STATUS_CODE | WINHTTP_QUERY_FLAG_NUMBER,
                           WINHTTP_HEADER_NAME_BY_INDEX, &status, &size, WINHTTP_NO_HEADER_INDEX)) {
    response.error = failure("WinHttpQueryHeaders");
    return response;
  }
  std::vector<char> chunk(64 * 1024);
  for (;;) {
    DWORD got = 0;
    if (!WinHttpReadData(request.handle, chunk.data(), static_cast<DWORD>(chunk.size()), &got)) {
      response.error = failure("WinHttpReadData");
      return response;
    }
    if (got == 0) break;
    response.body.append(chunk.data(), got);
  }
  response.status = static_cast<long>(status);
  return response;
}

}  // namespace etwaudit
