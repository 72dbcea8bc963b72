#pragma once
// --devices, for the commands and benchmarks that spread one run over several devices.

#include <string>
#include <vector>

#include "ziggurat/base/context.hpp"

namespace ziggurat::cli {

/// A context on each device `specs` names: one spec selects every device it matches ("all",
/// "gpu"); several, separated by '/' (a comma already means "and" inside a spec), one device each,
/// in that order (a device may repeat). DeviceNotFound when nothing matches.
std::vector<Context> contexts_on(const std::string& specs);

}  // namespace ziggurat::cli
