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

// CURLOPT_XFERINFOFUNCTION: non-zero ends the transfer (CURLE_ABORTED_BY_CALLBACK).
int ask_give_up(void* give_up, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return (*static_cast<const std::function<bool()>*>(give_up))() ? 1 : 0;
}

}  // namespace

bool http_available() {
  return true;
}

HttpResponse http_post(const std::string& url, const std::string& text, const HttpCredentials& credentials,
                       std::chrono::seconds timeout, bool gzip, const std::function<bool()>& give_up) {
  global_init();
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
  if (!credentials.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, credentials.ca_file.c_str());
  if (give_up) {  // libcurl calls it about once a second, waiting or not
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, ask_give_up);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &give_up);
  }
  if (!credentials.user.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERNAME, credentials.user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, credentials.password.c_str());
  }
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: text/plain; charset=utf-8");
  headers = curl_slist_append(headers, "Expect:");  // the body at once, without waiting for 100 Continue
  if (gzip) headers = curl_slist_append(headers, "Content-Encoding: gzip");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  const CURLcode result = curl_easy_perform(curl);
  if (result == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  } else {
    response.error = result == CURLE_ABORTED_BY_CALLBACK ? "given up waiting for the server"
                     : error[0]                          ? error
                                                         : curl_easy_strerror(result);
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return response;
}

}  // namespace etwaudit
