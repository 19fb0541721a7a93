#include <catch2/catch.hpp>

#include "core/human_format.h"

using namespace etwaudit;

TEST_CASE("byte sizes read with units of 1024, and nonsense is refused", "[human_format]") {
  CHECK(parse_byte_size("4096") == 4096u);
  CHECK(parse_byte_size("64KiB") == 65536u);
  CHECK(parse_byte_size("500MB") == 500u << 20);
  CHECK(parse_byte_size("2GB") == 2ull << 30);
  CHECK(parse_byte_size("2g") == 2ull << 30);
  CHECK(parse_byte_size("1.5G") == 3ull << 29);
  CHECK(parse_byte_size("1T") == 1ull << 40);
  for (const char* bad : {"", "GB", "2 GB", "-1G", "0", "2XB", "1..5G", ".", "99999999999T", "2GBB"})
    CHECK_FALSE(parse_byte_size(bad));
}
