// Error types shared by every stage: whose fault an error is decides the exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace simumax::common {

// The user's fault: a bad config file, field or combination. The CLI prints
// "error: <file>: <json-pointer>: <message>" and exits with code 2.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string file, std::string pointer, std::string message);
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  std::string pointer_;
  std::string message_;
};

// The user's fault but not tied to one file (bad command-line argument). Exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Our fault: an invariant broke. The CLI prints "internal error: ..." and exits with code 3.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace simumax::common
