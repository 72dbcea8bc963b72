#pragma once
// Text helpers for the command-line tool and the benchmarks: options and their checks, sizes,
// units, tables, dates. The texts the shared runs also use (memory sizes, lists, numbers) are the
// application layer's (ziggurat/app/text.hpp), named here as they are there.

#include <cstddef>
#include <cstdint>
#include <CLI/CLI.hpp>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "ziggurat/app/text.hpp"
#include "ziggurat/base/device.hpp"

namespace ziggurat::cli {

using app::number_text;
using app::parse_bytes;
using app::split;

/// "1023x777" -> {1023, 777}; between `min_dims` and `max_dims` positive extents. Throws
/// InvalidArgument naming `option` and saying what is wrong with the text.
std::vector<std::size_t> parse_extents(const std::string& text, std::size_t min_dims, std::size_t max_dims,
                                       const std::string& option = "--size");

/// "auto" -> 0, "12" -> 12: a whole number >= 1 or auto (a signed or partly numeric text is
/// refused). Throws InvalidArgument "<option> is auto or a whole number >= 1 (<meaning>), not ...".
std::size_t parse_auto_count(const std::string& text, const char* option, const char* meaning);

/// "1,5,10" -> {1, 5, 10}; positive numbers only. `what` names the option in errors.
std::vector<double> parse_numbers(const std::string& text, const std::string& what);

/// "1,2,12" -> {1, 2, 12}: whole numbers >= 1 (with `automatic`, also auto, as 0). Throws
/// InvalidArgument "<option> takes <meaning>, comma-separated, not ..." for anything else (an
/// empty item, a sign, a number beyond 32 bits).
std::vector<std::size_t> parse_counts(const std::string& text, const std::string& option, const std::string& meaning,
                                      bool automatic = false);

/// "f32,f64" -> {"f32", "f64"}: the precisions of a benchmark; InvalidArgument naming --precision
/// for anything else.
std::vector<std::string> parse_precisions(const std::string& text);

/// A CLI11 check that a value is a whole number from `min` to `max`, in decimal digits (CLI11
/// itself would take -1 as 2^64 - 1, 010 as 8 and 0x10 as 16): "--steps: must be a whole number
/// >= 0 (decimal digits, no leading zero), not '-3'".
CLI::Validator whole_number(std::size_t min, std::size_t max = std::numeric_limits<std::size_t>::max());

/// CLI11 checks that a value is a finite number (nan, inf and numbers beyond double's range are
/// refused: CLI11 itself takes them), of any sign, > 0 or >= 0: "--dt: must be a positive finite
/// number, not 'nan'". Every floating-point option carries one.
CLI::Validator finite_number();
CLI::Validator positive_number(double most = std::numeric_limits<double>::max());
CLI::Validator non_negative_number();

/// Adds a check that refuses an empty value ('--size ""' is no size) to every option of `app` and
/// its subcommands that takes a value.
void refuse_empty_values(CLI::App& app);

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
