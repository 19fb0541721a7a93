// platform/http.h in a build without libcurl: no HTTP.

#include "platform/http.h"

namespace etwaudit {

bool http_available() {
  return false;
}

std::string gzip_compress(const std::string&) {
  return {};
}

HttpResponse http_post(const std::string&, const std::string&, const HttpCredentials&, std::chrono::seconds, bool) {
  HttpResponse response;
  response.error = "this build of etwaudit has no HTTP (built without libcurl)";
  return response;
}

std::string url_encode(const std::string& text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace etwaudit
