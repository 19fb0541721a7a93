#pragma once
// Error: a failure the user can act on (exit 1). UsageError: the command line
// was wrong (exit 2). Both carry a message that says what failed, on what, and why.

#include <stdexcept>
#include <string>

namespace etwaudit {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace etwaudit
