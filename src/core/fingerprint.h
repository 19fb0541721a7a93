#pragma once
// A file's fingerprint, to notice when the same input is read twice.

#include <string>

namespace etwaudit {

// "fnv1a64:<16 hex digits>:<size>" over the whole file; FNV-1a is fast and
// stable, and identifying inputs needs no cryptographic strength. Throws
// Error when the file cannot be read.
std::string file_fingerprint(const std::string& path);

}  // namespace etwaudit
