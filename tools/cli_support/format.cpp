#include "format.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <exception>
#include <iomanip>
#include <sstream>

#include "ziggurat/base/error.hpp"
#include "ziggurat/io/npy.hpp"

namespace ziggurat::cli {

std::vector<std::size_t> parse_extents(const std::string& text, std::size_t min_dims, std::size_t max_dims,
                                       const std::string& option) {
  const std::string example = max_dims == 2 ? "1024x768" : min_dims == 3 ? "100x100x100" : "1024x768x64";
  const auto fail = [&](const std::string& problem) -> std::vector<std::size_t> {
    throw InvalidArgument(option + " '" + text + "': " + problem + "; write extents fastest axis first, e.g. " + example);
  };
  std::vector<std::size_t> extents;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find('x', start), text.size());
    const std::string part = text.substr(start, end - start);
    if (part.empty() || part.size() > 18 ||
        !std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c); })) {
      return fail("'" + part + "' is not a positive integer");
    }
    extents.push_back(std::stoull(part));
    if (extents.back() == 0) return fail("an extent is zero");
    start = end + 1;
  }
  if (extents.size() < min_dims || extents.size() > max_dims) {
    return fail("expected " + std::to_string(min_dims) + (min_dims == max_dims ? "" : " to " + std::to_string(max_dims)) +
                " extents, got " + std::to_string(extents.size()));
  }
  return extents;
}

std::size_t parse_auto_count(const std::string& text, const char* option, const char* meaning) {
  if (text == "auto") return 0;
  try {
    std::size_t used = 0;
    const unsigned long count = std::stoul(text, &used);
    if (used == text.size() && count >= 1 && text.find('-') == std::string::npos) return count;
  } catch (const std::exception&) {
  }
  throw InvalidArgument(std::string(option) + " is auto or a whole number >= 1 (" + meaning + "), not '" + text + "'");
}

std::vector<double> parse_numbers(const std::string& text, const std::string& what) {
  std::vector<double> numbers;
  for (const auto& part : split(text, ',')) {
    std::size_t end = 0;
    double value = 0;
    try {
      value = std::stod(part, &end);
    } catch (const std::exception&) {
      end = 0;
    }
    if (end == 0 || end != part.size() || !(value > 0) || !std::isfinite(value)) {
      throw InvalidArgument(what + " '" + text + "': '" + part + "' is not a positive number");
    }
    numbers.push_back(value);
  }
  return numbers;
}

std::vector<std::string> parse_precisions(const std::string& text) {
  std::vector<std::string> precisions = split(text, ',');
  for (const std::string& p : precisions)
    if (p != "f32" && p != "f64") throw InvalidArgument("--precision takes f32, f64 or f32,f64, not '" + text + "'");
  return precisions;
}

std::vector<std::size_t> parse_counts(const std::string& text, const std::string& option, const std::string& meaning,
                                      bool automatic) {
  std::vector<std::size_t> counts;
  for (const std::string& part : split(text, ',')) {
    const bool digits = !part.empty() && part.size() <= 9 &&
                        std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c); });
    if (automatic && part == "auto") {
      counts.push_back(0);
    } else if (digits && std::stoul(part) >= 1) {
      counts.push_back(std::stoul(part));
    } else {
      throw InvalidArgument(option + " takes " + meaning + (automatic ? " (whole numbers >= 1 or auto)" : " (whole numbers >= 1)") +
                            ", comma-separated, not '" + text + "'" + (part != text ? ": '" + part + "' is none" : ""));
    }
  }
  return counts;
}

CLI::Validator whole_number(std::size_t min, std::size_t max) {
  const std::string range = max == std::numeric_limits<std::size_t>::max() ? "a whole number >= " + std::to_string(min)
                            : max == min + 1 ? std::to_string(min) + " or " + std::to_string(max)
                                             : "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.size() <= 19 &&
                            std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
        if (digits && (text.size() == 1 || text[0] != '0')) {  // CLI11 would read 010 as octal 8
          const unsigned long long value = std::stoull(text);
          if (value >= min && value <= max) return {};
        }
        return "must be " + range + " (decimal digits, no leading zero), not '" + text + "'";
      },
      max == std::numeric_limits<std::size_t>::max() ? "INT>=" + std::to_string(min)
                                                      : "INT in " + std::to_string(min) + ".." + std::to_string(max));
}

namespace {

// A number that is finite in double, at most `most` and, by `sign`, > 0 (1), >= 0 (0) or of any
// sign (-1).
CLI::Validator real_number(int sign, const char* name, std::string words,
                           double most = std::numeric_limits<double>::max()) {
  return CLI::Validator(
      [sign, words, most](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
                                 ? std::nan("")
                                 : std::strtod(text.c_str(), &end);
        const bool whole = end != nullptr && *end == '\0';
        if (whole && std::isfinite(value) && value <= most && (sign < 0 || value > 0 || (sign == 0 && value == 0)))
          return {};
        return "must be " + words + ", not '" + text + "'";
      },
      name);
}

}  // namespace

CLI::Validator finite_number() { return real_number(-1, "FINITE", "a finite number"); }
CLI::Validator positive_number(double most) {
  return real_number(1, "POSITIVE", most == std::numeric_limits<double>::max()
                                        ? "a positive finite number"
                                        : "a positive finite number up to " + number_text(most), most);
}
CLI::Validator non_negative_number() { return real_number(0, "NONNEGATIVE", "a finite number >= 0"); }

void refuse_empty_values(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size() == 0) continue;  // a flag
    option->check(CLI::Validator([](std::string& text) { return text.empty() ? "the value is empty" : ""; }, ""));
  }
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) refuse_empty_values(*command);
}

void require_device_precision(const DeviceInfo& device, const std::string& precision) {
  if (precision == "f64" && !device.fp64) {
    throw UnsupportedFeature(device.label() + " has no double precision (cl_khr_fp64): use --precision f32, or a "
                             "device with fp64 (--device fp64)");
  }
}

void add_precision_option(CLI::App* command, std::string& precision, const std::string& help) {
  command->add_option("--precision", precision, help)
      ->check(CLI::IsMember({"f32", "f64"}))
      ->capture_default_str();
}

std::string bytes_text(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  std::ostringstream text;
  text << (unit == 0 ? std::setprecision(0) : std::setprecision(value < 10 ? 2 : value < 100 ? 1 : 0))
       << std::fixed << value << " " << units[unit];
  return text.str();
}

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> widths;
  for (const auto& row : rows_) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows_) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    out << line << "\n";
  }
}

void Table::print_markdown(std::ostream& out) const {
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    std::string line = "|";
    for (std::string cell : rows_[i]) {
      for (std::size_t at = 0; (at = cell.find('|', at)) != std::string::npos; at += 2) cell.insert(at, 1, '\\');
      line += " " + cell + " |";
    }
    out << line << "\n";
    if (i == 0) {
      std::string rule = "|";
      for (std::size_t c = 0; c < rows_[0].size(); ++c) rule += "---|";
      out << rule << "\n";
    }
  }
}

std::string precision_or_input_type(const std::string& precision, const std::string& input) {
  if (!precision.empty()) return precision;
  return !input.empty() && read_npy_header(input).type == NpyType::f64 ? "f64" : "f32";
}

}  // namespace ziggurat::cli
