#pragma once
// What the heat and Poisson commands share about the blocked kernels: the --depth option's text
// and the tuner's choice in a run's JSON summary.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "ziggurat/tuning/blocking_autotune.hpp"

namespace ziggurat::cli {

/// --depth: a whole number >= 1, or auto (0: the tuned depth). `unit` names what a launch
/// advances ("steps", "sweeps") in the error.
std::size_t parse_depth(const std::string& text, const char* unit);

/// {"key", "measured_now", "ns_per_node": {candidate: ns, ...}}.
nlohmann::json blocking_json(const BlockingChoice& choice);

}  // namespace ziggurat::cli
