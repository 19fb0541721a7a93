#pragma once
// etwaudit-bench --decoder: the decoder's cost per file operation, with and
// without OperationEnd records (see decoder_bench.cpp).

#include <cstdint>

namespace bench {

// Prints the timings; 1 when the decoder did not deliver what it was given.
int decoder_benchmark(std::uint64_t operations);

}  // namespace bench
