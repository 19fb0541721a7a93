// platform/http.h in a build without an HTTP client or zlib: no HTTP.

#include "platform/http.h"

namespace etwaudit {

bool http_available() {
  return false;
}

std::string gzip_compress(const std::string&) {
  return {};
}

HttpResponse http_post(const std::string&, const std::string&, const HttpCredentials&, std::chrono::seconds, bool,
                       const std::function<bool()>&) {
  HttpResponse response;
  response.error = "this build of etwaudit has no HTTP (built without libcurl or zlib)";
  return response;
}

}  // namespace etwaudit
