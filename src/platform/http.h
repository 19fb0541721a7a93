#pragma once
// HTTP for the destinations that take events over it (ClickHouse): one POST
// at a time, through libcurl (http_curl.cpp, Debian's libcurl4-openssl-dev)
// or WinHTTP on Windows (http_winhttp.cpp); HTTPS when the URL says https://,
// with the system's certificates; bodies compressed with zlib (gzip.cpp). A
// build without them has none (http_none.cpp), and says so.

#include <chrono>
#include <functional>
#include <string>

namespace etwaudit {

struct HttpResponse {
  long status = 0;    // the HTTP status; 0 when no response came
  std::string body;   // the response body
  std::string error;  // why no response came (connection refused, timeout, ...); "" when one came
};

struct HttpCredentials {
  std::string user, password;  // HTTP basic authentication when user is not empty
  // HTTPS: a PEM file of the certificate authorities to trust instead of
  // the system's (libcurl only; WinHTTP trusts the machine's store).
  std::string ca_file;
};

// Whether this build can speak HTTP.
bool http_available();
// POSTs body to url, gzip-compressed (Content-Encoding: gzip, zlib's level
// 1) when gzip is set; never throws for a network failure (see error).
// give_up, when given, is asked about every second while the request waits
// (from another thread on Windows); true ends it with an error.
HttpResponse http_post(const std::string& url, const std::string& body, const HttpCredentials& credentials,
                       std::chrono::seconds timeout, bool gzip = false, const std::function<bool()>& give_up = {});
// text gzip-compressed at zlib's level 1 (what http_post sends); empty
// when this build has no HTTP.
std::string gzip_compress(const std::string& text);
// url with text percent-encoded for a query parameter.
std::string url_encode(const std::string& text);

}  // namespace etwaudit
