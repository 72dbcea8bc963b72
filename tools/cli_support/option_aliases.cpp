// Old spellings of options: the deprecation warning.

#include "option_aliases.hpp"

#include <iostream>

namespace ziggurat::cli {

void warn_deprecated(const std::string& old_name, const std::string& current_name) {
  std::cerr << "warning: " << old_name << " is deprecated and goes in the next version: use " << current_name << "\n";
}

}  // namespace ziggurat::cli
