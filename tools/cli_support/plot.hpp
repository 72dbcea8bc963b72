#pragma once
// Line plots as PNG files, through PLplot (when the build found it).

#include <filesystem>
#include <string>
#include <vector>

namespace ziggurat::cli {

struct Series {
  std::string label;
  std::vector<double> x, y;
  bool dashed = false;
};

/// Draws the series on linear axes into `png`, written atomically. Throws UnsupportedFeature in a
/// build without PLplot, IoError when the file cannot be written.
void plot_lines(const std::filesystem::path& png, const std::string& title, const std::string& x_label,
                const std::string& y_label, const std::vector<Series>& series);

}  // namespace ziggurat::cli
