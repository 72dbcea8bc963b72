#pragma once
// The time of day as the library writes it: in device profiles (their date) and in progress lines.

#include <string>

namespace ziggurat {

/// Now, in UTC, as ISO 8601 to the second: "2026-11-28T04:40:01Z".
std::string utc_timestamp();

}  // namespace ziggurat
