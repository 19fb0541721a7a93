// platform/http.h with WinHTTP, the HTTP client in every Windows: HTTPS with
// the system's certificate store and the machine's proxy settings
// (WINHTTP_ACCESS_TYPE_DEFAULT_PROXY), nothing to install beside etwaudit.

#include "platform/http.h"

#include <windows.h>
// (wincrypt.h and winhttp.h need windows.h first)
#include <wincrypt.h>
#include <winhttp.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
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
                       std::chrono::seconds timeout, bool gzip, const std::function<bool()>& give_up) {
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
  // give_up: a thread that asks it every second and, on a yes, cancels the
  // request the way WinHTTP documents, by closing its handle (the calls
  // waiting on it then fail). It ends before the handles do.
  std::mutex closing;
  std::condition_variable finished;
  bool done = false, given_up = false;
  std::thread watchdog;
  const HINTERNET handle = request.handle;
  if (give_up)
    watchdog = std::thread([&] {
      std::unique_lock lock(closing);
      while (!finished.wait_for(lock, std::chrono::seconds(1), [&] { return done; })) {
        if (!give_up()) continue;
        given_up = true;
        WinHttpCloseHandle(handle);  // the handle stays in request, for this thread alone
        return;
      }
    });
  struct StopWatchdog {
    std::mutex& closing;
    std::condition_variable& finished;
    bool& done;
    const bool& given_up;
    std::thread& watchdog;
    Handle& request;
    ~StopWatchdog() {
      {
        std::lock_guard lock(closing);
        done = true;
      }
      finished.notify_one();
      if (watchdog.joinable()) watchdog.join();
      if (given_up) request.handle = nullptr;  // closed already
    }
  } stop_watchdog{closing, finished, done, given_up, watchdog, request};
  auto failed = [&](const char* call) {
    std::lock_guard lock(closing);
    return given_up ? std::string("given up waiting for the server") : failure(call);
  };
  std::wstring headers = L"Content-Type: text/plain; charset=utf-8\r\n";
  if (gzip) headers += L"Content-Encoding: gzip\r\n";
  if (!credentials.user.empty()) headers += basic_authorization(credentials);
  if (!WinHttpSendRequest(request.handle, headers.c_str(), static_cast<DWORD>(headers.size()),
                          const_cast<char*>(body.data()), static_cast<DWORD>(body.size()),
                          static_cast<DWORD>(body.size()), 0)) {
    response.error = failed("WinHttpSendRequest");
    return response;
  }
  if (!WinHttpReceiveResponse(request.handle, nullptr)) {
    response.error = failed("WinHttpReceiveResponse");
    return response;
  }
  DWORD status = 0, size = sizeof status;
  if (!WinHttpQueryHeaders(request.handle, WINHTTP_QUERY_STATUS_CODE | WINHTTP_QUERY_FLAG_NUMBER,
                           WINHTTP_HEADER_NAME_BY_INDEX, &status, &size, WINHTTP_NO_HEADER_INDEX)) {
    response.error = failed("WinHttpQueryHeaders");
    return response;
  }
  std::vector<char> chunk(64 * 1024);
  for (;;) {
    DWORD got = 0;
    if (!WinHttpReadData(request.handle, chunk.data(), static_cast<DWORD>(chunk.size()), &got)) {
      response.error = failed("WinHttpReadData");
      return response;
    }
    if (got == 0) break;
    response.body.append(chunk.data(), got);
  }
  response.status = static_cast<long>(status);
  return response;
}

}  // namespace etwaudit
