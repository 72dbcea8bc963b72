#include "blocking_options.hpp"

#include <exception>

#include "ziggurat/base/error.hpp"

namespace ziggurat::cli {

std::size_t parse_depth(const std::string& text, const char* unit) {
  if (text == "auto") return 0;
  try {
    std::size_t used = 0;
    const unsigned long depth = std::stoul(text, &used);
    if (used == text.size() && depth >= 1 && text.find('-') == std::string::npos) return depth;
  } catch (const std::exception&) {
  }
  throw InvalidArgument("--depth is auto or a whole number >= 1 (" + std::string(unit) + " a launch), not '" + text + "'");
}

nlohmann::json blocking_json(const BlockingChoice& choice) {
  nlohmann::json candidates = nlohmann::json::object();
  for (const auto& [name, seconds] : choice.seconds) candidates[name] = seconds * 1e9;
  return {{"key", choice.key}, {"measured_now", choice.measured_now}, {"ns_per_node", candidates}};
}

}  // namespace ziggurat::cli
