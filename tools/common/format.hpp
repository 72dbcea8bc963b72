#pragma once
// Text helpers for the command-line tool: sizes, units, tables, dates.

#include <cstddef>
#include <cstdint>
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "ziggurat/base/device.hpp"

namespace ziggurat::cli {

/// "1023x777" -> {1023, 777}; between `min_dims` and `max_dims` positive extents. Throws
/// InvalidArgument saying what is wrong with the text.
std::vector<std::size_t> parse_extents(const std::string& text, std::size_t min_dims, std::size_t max_dims);

/// "512MiB", "1.5GiB", "2GB", "4096" -> bytes (binary KiB/MiB/GiB/TiB, decimal kB/MB/GB/TB).
/// Throws InvalidArgument naming the text.
std::uint64_t parse_bytes(const std::string& text);

/// "auto" -> 0, "12" -> 12: a whole number >= 1 or auto (a signed or partly numeric text is
/// refused). Throws InvalidArgument "<option> is auto or a whole number >= 1 (<meaning>), not ...".
std::size_t parse_auto_count(const std::string& text, const char* option, const char* meaning);

/// "1,5,10" -> {1, 5, 10}; positive numbers only. `what` names the option in errors.
std::vector<double> parse_numbers(const std::string& text, const std::string& what);

/// "a,b,c" -> {"a", "b", "c"}, spaces trimmed.
std::vector<std::string> split(const std::string& text, char separator);

/// A CLI11 check that a value is a whole number >= min ("--steps must be ...").
CLI::Validator whole_number(std::size_t min);

/// Adds --precision f32|f64 to a command; `precision` holds the default.
void add_precision_option(CLI::App* command, std::string& precision,
                          const std::string& help = "f32 (float) or f64 (double)");

/// --precision as given, else the type of the .npy array at `input` (f64 or f32), else f32.
std::string precision_or_input_type(const std::string& precision, const std::string& input);

/// Throws UnsupportedFeature, in terms of the options, when --precision is f64 and `device` has no
/// double precision.
void require_device_precision(const DeviceInfo& device, const std::string& precision);

/// Calls run(float{}) or run(double{}) as --precision says.
template <class Run>
void with_precision(const std::string& precision, Run run) {
  if (precision == "f64") {
    run(double{});
  } else {
    run(float{});
  }
}

/// 1536 -> "1.5 KiB"
std::string bytes_text(std::uint64_t bytes);

/// A number with `digits` significant digits.
std::string number_text(double value, int digits = 3);

/// The local date and time, ISO 8601.
std::string now_text();

/// A plain-text table with aligned columns.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const;           ///< aligned columns
  void print_markdown(std::ostream& out) const;  ///< a Markdown table, the first row its header

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace ziggurat::cli
