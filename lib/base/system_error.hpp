#pragma once
// The text of an errno value, for error messages.

#include <string>

namespace ziggurat::detail {

/// strerror for errno values, thread-safe.
std::string system_error_text(int error);

}  // namespace ziggurat::detail
