#include "base/system_error.hpp"

#include <system_error>

namespace ziggurat::detail {

std::string system_error_text(int error) { return std::generic_category().message(error); }

}  // namespace ziggurat::detail
