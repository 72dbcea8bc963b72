#include "ziggurat/app/text.hpp"

#include <cmath>
#include <exception>
#include <iomanip>
#include <sstream>
#include <utility>

#include "ziggurat/base/error.hpp"

namespace ziggurat::app {

std::uint64_t parse_bytes(const std::string& text) {
  static const std::pair<const char*, double> units[] = {
      {"", 1},          {"B", 1},       {"KiB", 1024.0},  {"MiB", 1048576.0}, {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}, {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}};
  std::size_t end = 0;
  double value = 0;
  try {
    value = std::stod(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  const std::string unit = end > 0 ? text.substr(end) : "";
  for (const auto& [name, factor] : units) {
    if (end > 0 && unit == name && std::isfinite(value) && value > 0 && value * factor < 1.8e19) {
      return static_cast<std::uint64_t>(value * factor);
    }
  }
  throw InvalidArgument("'" + text + "' is not a memory size: write a positive number with an optional unit, e.g. "
                        "512MiB, 1.5GiB, 2GB or 4096 (bytes)");
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);) {
    const auto first = part.find_first_not_of(" \t"), last = part.find_last_not_of(" \t");
    parts.push_back(first == std::string::npos ? "" : part.substr(first, last - first + 1));
  }
  return parts;
}

std::string number_text(double value, int digits) {
  std::ostringstream text;
  const double magnitude = std::abs(value);
  if (magnitude >= 1 && magnitude < 1e6) {
    // Plain decimals for readable magnitudes: 1040, 78.7, 8.49.
    int decimals = digits - 1;
    for (double bound = 10; magnitude >= bound && decimals > 0; bound *= 10) --decimals;
    text << std::fixed << std::setprecision(decimals) << value;
  } else {
    text << std::setprecision(digits) << value;
  }
  return text.str();
}

}  // namespace ziggurat::app
