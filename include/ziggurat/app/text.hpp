#pragma once
// The texts the shared runs read and write, as the CLI and the Python package both take them:
// memory sizes ("512MiB"), comma-separated lists, numbers in messages and descriptions.

#include <cstdint>
#include <string>
#include <vector>

namespace ziggurat::app {

/// "512MiB", "1.5GiB", "2GB", "4096" -> bytes (binary KiB/MiB/GiB/TiB, decimal kB/MB/GB/TB).
/// Throws InvalidArgument naming the text.
std::uint64_t parse_bytes(const std::string& text);

/// "a,b,c" -> {"a", "b", "c"}, spaces trimmed.
std::vector<std::string> split(const std::string& text, char separator);

/// A number with `digits` significant digits: plain decimals from 1 to 1e6 (1040, 78.7, 8.49),
/// else as printf's %g.
std::string number_text(double value, int digits = 3);

}  // namespace ziggurat::app
