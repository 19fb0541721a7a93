// platform/http.h with libcurl.

#include <curl/curl.h>

#include <cstdio>
#include <mutex>

#include "platform/http.h"

namespace etwaudit {
namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::size_t append(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

}  // namespace

bool http_available() {
  return true;
}

HttpResponse http_post(const std::string& url, const std::string& body, const HttpCredentials& credentials,
                       std::chrono::seconds timeout) {
  global_init();
  HttpResponse response;
  CURL* curl = curl_easy_init();
  if (!curl) {
    response.error = "curl_easy_init failed";
    return response;
  }
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (!credentials.user.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERNAME, credentials.user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, credentials.password.c_str());
  }
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: text/plain; charset=utf-8");
  headers = curl_slist_append(headers, "Expect:");  // the body at once, without waiting for 100 Continue
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  const CURLcode result = curl_easy_perform(curl);
  if (result == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  } else {
    response.error = error[0] ? error : curl_easy_strerror(result);
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return response;
}

std::string url_encode(const std::string& text) {
  global_init();
  std::string out;
  if (CURL* curl = curl_easy_init()) {
    if (char* escaped = curl_easy_escape(curl, text.data(), static_cast<int>(text.size()))) {
      out = escaped;
      curl_free(escaped);
    }
    curl_easy_cleanup(curl);
  }
  return out;
}

}  // namespace etwaudit
