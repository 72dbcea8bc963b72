#include "ziggurat/io/matrix_market.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <utility>

#include "base/system_error.hpp"
#include "io/matrix_market.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"
#include "ziggurat/base/host_memory.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/base/version.hpp"

namespace ziggurat::sparse {

namespace {

constexpr std::size_t kChunkBytes = std::size_t{16} << 20;
constexpr std::size_t kShortestEntryBytes = 4;  // "1 1\n"
constexpr std::size_t kReserveWhenSizeUnknown = std::size_t{1} << 20;

const char* const kBannerForm =
    "'%%MatrixMarket matrix coordinate real|integer|pattern general|symmetric|skew-symmetric'";

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

// ASCII only: the banner's words are ASCII, and the C locale functions depend on the locale.
bool equals_ignoring_case(std::string_view text, std::string_view lower) {
  return text.size() == lower.size() &&
         std::equal(text.begin(), text.end(), lower.begin(), [](char a, char b) {
           return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b;
         });
}

// A token as messages show it: quoted, at most 40 bytes, other than printable ASCII escaped.
std::string quote(std::string_view token) {
  constexpr std::size_t kShown = 40;
  std::string out = "'";
  for (const char c : token.substr(0, kShown)) {
    if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
      out += escaped;
    }
  }
  out += token.size() > kShown ? "...'" : "'";
  return out;
}

// from_chars over the whole token: invalid_argument also when it is followed by anything.
template <class Number>
std::errc parse_number(std::string_view token, Number& value) {
  const char* end = token.data() + token.size();
  const auto [stop, error] = std::from_chars(token.data(), end, value);
  return stop != end ? std::errc::invalid_argument : error;
}

// Integers, or floating-point values as the shortest text that reads back to the same value.
template <class Number>
void append_number(std::string& out, Number value) {
  char digits[32];  // the longest double is 24 characters: -2.2250738585072014e-308
  out.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
}

template <class Number>
std::string shortest(Number value) {
  std::string text;
  append_number(text, value);
  return text;
}

const char* symmetry_name(MatrixMarketSymmetry symmetry) {
  switch (symmetry) {
    case MatrixMarketSymmetry::general: return "general";
    case MatrixMarketSymmetry::symmetric: return "symmetric";
    case MatrixMarketSymmetry::skew_symmetric: return "skew-symmetric";
  }
  return "?";
}

// How many entries a size line may declare: (skew-)symmetric files store one triangle.
// rows and cols are below 2^32, so no product overflows.
std::uint64_t entry_capacity(const MatrixMarketHeader& h) {
  switch (h.symmetry) {
    case MatrixMarketSymmetry::general: return std::uint64_t{h.rows} * h.cols;
    case MatrixMarketSymmetry::symmetric: return std::uint64_t{h.rows} * (h.rows + 1) / 2;
    case MatrixMarketSymmetry::skew_symmetric:
      return h.rows == 0 ? 0 : std::uint64_t{h.rows} * (h.rows - 1) / 2;
  }
  return 0;
}

}  // namespace

namespace detail {

// Splits a line at spaces and tabs.
template <class T>
class MatrixMarketParser<T>::Tokens {
 public:
  explicit Tokens(std::string_view line) : rest_(line) {}
  /// The next token; empty at the end of the line.
  std::string_view next() {
    std::size_t begin = 0;
    while (begin < rest_.size() && is_blank(rest_[begin])) ++begin;
    std::size_t end = begin;
    while (end < rest_.size() && !is_blank(rest_[end])) ++end;
    const auto token = rest_.substr(begin, end - begin);
    rest_.remove_prefix(end);
    return token;
  }

 private:
  std::string_view rest_;
};

template <class T>
MatrixMarketParser<T>::MatrixMarketParser(std::string name, std::size_t input_bytes,
                                          std::size_t max_dimension)
    : name_(std::move(name)),
      input_bytes_(input_bytes),
      max_dimension_(std::min(max_dimension, max_dimension_default)) {}

template <class T>
void MatrixMarketParser<T>::fail(std::size_t line, const std::string& what) const {
  throw IoError(name_ + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + what);
}

template <class T>
void MatrixMarketParser<T>::feed(std::string_view text) {
  if (!partial_.empty()) {
    const auto end = text.find('\n');
    if (end == std::string_view::npos) {
      partial_.append(text);
      return;
    }
    partial_.append(text.substr(0, end));
    parse_line(partial_);
    partial_.clear();
    text.remove_prefix(end + 1);
  }
  while (const void* newline = std::memchr(text.data(), '\n', text.size())) {
    const auto end = static_cast<std::size_t>(static_cast<const char*>(newline) - text.data());
    parse_line(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  partial_.assign(text);
}

template <class T>
MatrixMarketMatrix<T> MatrixMarketParser<T>::finish() {
  if (!partial_.empty()) {
    parse_line(partial_);
    partial_.clear();
  }
  const std::size_t end = line_ + 1;  // where the missing text should have been
  if (stage_ == Stage::banner) fail(1, std::string("empty input: expected the banner ") + kBannerForm);
  if (stage_ == Stage::size) fail(end, "truncated: no size line 'rows columns entries' after the banner");
  if (rows_.size() < header_.entries) {
    fail(end, "truncated: expected " + std::to_string(header_.entries) + " entries, found " +
                  std::to_string(rows_.size()));
  }
  return {header_, build_csr()};
}

template <class T>
void MatrixMarketParser<T>::parse_line(std::string_view line) {
  ++line_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  Tokens tokens(line);
  const auto first = tokens.next();
  if (stage_ == Stage::banner) {
    parse_banner(line, first, tokens);
    stage_ = Stage::size;
    return;
  }
  if (first.empty() || first[0] == '%') return;  // a blank line or a comment
  if (stage_ == Stage::size) {
    parse_size(first, tokens);
    stage_ = Stage::entries;
  } else {
    parse_entry(first, tokens);
  }
}

template <class T>
void MatrixMarketParser<T>::parse_banner(std::string_view line, std::string_view first, Tokens& tokens) {
  if (!equals_ignoring_case(first, "%%matrixmarket")) {
    fail(line_, std::string("expected the banner ") + kBannerForm + ", found " + quote(line));
  }
  const auto word = [&](const char* what) {
    const auto token = tokens.next();
    if (token.empty()) {
      fail(line_, std::string("banner: missing the ") + what + " (expected " + kBannerForm + ")");
    }
    return token;
  };
  const auto object = word("object");
  if (!equals_ignoring_case(object, "matrix")) {
    fail(line_, "banner: object " + quote(object) + " is not supported (only 'matrix')");
  }
  const auto format = word("format");
  if (equals_ignoring_case(format, "array")) {
    fail(line_, "banner: the dense 'array' format is not supported (only 'coordinate')");
  }
  if (!equals_ignoring_case(format, "coordinate")) {
    fail(line_, "banner: unknown format " + quote(format) + " (expected 'coordinate')");
  }

  const auto field = word("field");
  if (equals_ignoring_case(field, "real")) {
    header_.field = MatrixMarketField::real;
  } else if (equals_ignoring_case(field, "integer")) {
    header_.field = MatrixMarketField::integer;
  } else if (equals_ignoring_case(field, "pattern")) {
    header_.field = MatrixMarketField::pattern;
  } else if (equals_ignoring_case(field, "complex")) {
    fail(line_, "banner: complex matrices are not supported (only real, integer and pattern)");
  } else {
    fail(line_, "banner: unknown field " + quote(field) + " (expected real, integer or pattern)");
  }

  const auto symmetry = word("symmetry");
  if (equals_ignoring_case(symmetry, "general")) {
    header_.symmetry = MatrixMarketSymmetry::general;
  } else if (equals_ignoring_case(symmetry, "symmetric")) {
    header_.symmetry = MatrixMarketSymmetry::symmetric;
  } else if (equals_ignoring_case(symmetry, "skew-symmetric")) {
    header_.symmetry = MatrixMarketSymmetry::skew_symmetric;
  } else if (equals_ignoring_case(symmetry, "hermitian")) {
    fail(line_, "banner: hermitian matrices are not supported (only general, symmetric and skew-symmetric)");
  } else {
    fail(line_,
         "banner: unknown symmetry " + quote(symmetry) + " (expected general, symmetric or skew-symmetric)");
  }
  if (header_.field == MatrixMarketField::pattern &&
      header_.symmetry == MatrixMarketSymmetry::skew_symmetric) {
    fail(line_, "banner: a pattern matrix cannot be skew-symmetric (it has no values to negate)");
  }
  if (const auto extra = tokens.next(); !extra.empty()) {
    fail(line_, "banner: unexpected " + quote(extra) + " after the symmetry");
  }
}

template <class T>
std::size_t MatrixMarketParser<T>::parse_size_number(std::string_view token, const char* what) const {
  if (token.empty()) {
    fail(line_, std::string("size line: missing the ") + what + " (expected 'rows columns entries')");
  }
  std::uint64_t value = 0;
  const auto error = parse_number(token, value);
  if (error == std::errc::result_out_of_range) {
    fail(line_, std::string("size line: ") + what + " " + quote(token) + " is too large");
  }
  if (error != std::errc()) {
    fail(line_, std::string("size line: ") + what + " " + quote(token) + " is not a non-negative integer");
  }
  return value;
}

template <class T>
void MatrixMarketParser<T>::parse_size(std::string_view first, Tokens& tokens) {
  auto& h = header_;
  h.rows = parse_size_number(first, "row count");
  h.cols = parse_size_number(tokens.next(), "column count");
  h.entries = parse_size_number(tokens.next(), "entry count");
  if (const auto extra = tokens.next(); !extra.empty()) {
    fail(line_, "size line: unexpected " + quote(extra) + " after 'rows columns entries'");
  }
  const std::string shape = std::to_string(h.rows) + " x " + std::to_string(h.cols);
  if (h.rows > max_dimension_ || h.cols > max_dimension_) {
    fail(line_, "size line: " + shape + " is larger than the " + std::to_string(max_dimension_) +
                    " rows and columns that 32-bit indices (sparse::Index) allow");
  }
  if (h.symmetry != MatrixMarketSymmetry::general && h.rows != h.cols) {
    fail(line_,
         std::string("size line: a ") + symmetry_name(h.symmetry) + " matrix must be square, not " + shape);
  }
  if (h.entries > entry_capacity(h)) {
    fail(line_, "size line: " + std::to_string(h.entries) + " entries do not fit in a " + shape +
                    " matrix (at most " + std::to_string(entry_capacity(h)) +
                    (h.symmetry == MatrixMarketSymmetry::general ? ")" : " in the stored triangle)"));
  }
  if (h.entries > max_dimension_default) {
    fail(line_, "size line: " + std::to_string(h.entries) +
                    " entries are more than 32-bit indices (sparse::Index) allow");
  }
  // The entries as read (as many as the input can hold), then the CSR's row starts and entries, at
  // least: refused before any of it is allocated (a 4e9-row matrix would otherwise zero its row
  // starts for a minute first).
  const std::uint64_t bytes = (std::uint64_t{h.rows} + 1) * sizeof(Index) +
                              std::uint64_t{std::min(h.entries, entry_room())} * (3 * sizeof(Index) + 2 * sizeof(T));
  check_host_memory(bytes, name_ + ":" + std::to_string(line_) + ": a " + shape + " matrix of " +
                               std::to_string(h.entries) + " entries", "it cannot be read on this machine");
  reserve_entries();
}

template <class T>
std::size_t MatrixMarketParser<T>::entry_room() const {
  return input_bytes_ > 0 ? input_bytes_ / kShortestEntryBytes + 1 : std::numeric_limits<std::size_t>::max();
}

template <class T>
void MatrixMarketParser<T>::reserve_entries() {
  const std::size_t room = input_bytes_ > 0 ? entry_room() : kReserveWhenSizeUnknown;
  const std::size_t count = std::min(header_.entries, room);
  rows_.reserve(count);
  cols_.reserve(count);
  values_.reserve(count);
}

template <class T>
Index MatrixMarketParser<T>::parse_index(std::string_view token, const char* what, std::size_t count) const {
  if (token.empty()) {
    fail(line_, std::string("missing the ") + what + " index (an entry is 'row column" +
                    (header_.field == MatrixMarketField::pattern ? "')" : " value')"));
  }
  std::uint64_t index = 0;
  const auto error = parse_number(token, index);
  if (error == std::errc::invalid_argument) {
    fail(line_, std::string(what) + " index " + quote(token) + " is not a positive integer");
  }
  if (error != std::errc() || index == 0 || index > count) {
    fail(line_, std::string(what) + " index " + quote(token) + " out of range 1.." + std::to_string(count));
  }
  return static_cast<Index>(index - 1);
}

template <class T>
T MatrixMarketParser<T>::parse_value(std::string_view token) const {
  if (token.empty()) fail(line_, "missing the value (an entry is 'row column value')");
  // from_chars takes no '+', strtod and Fortran writers do; "+-1" stays malformed.
  if (token.size() > 1 && token[0] == '+' && token[1] != '-') token.remove_prefix(1);
  if (header_.field == MatrixMarketField::integer) {
    long long value = 0;
    const auto error = parse_number(token, value);
    if (error == std::errc::result_out_of_range) {
      fail(line_, "value " + quote(token) + " is beyond the range of a 64-bit integer");
    }
    if (error != std::errc()) {
      fail(line_, "value " + quote(token) + " is not an integer (the field is 'integer')");
    }
    return static_cast<T>(value);
  }
  // Straight to T: through double, some floats would round twice (what to_chars writes for the
  // float 0x15ae43fd, "7.038531e-26", would read back as its neighbour).
  T value = 0;
  const auto error = parse_number(token, value);
  if (error == std::errc::result_out_of_range) {
    fail(line_, "value " + quote(token) + " is beyond the range of " + type_name<T>() +
                    " (it would round to infinity or to zero)");
  }
  if (error != std::errc()) fail(line_, "value " + quote(token) + " is not a number");
  if (!std::isfinite(value)) {
    fail(line_, "value " + quote(token) + " is not finite (NaN and infinity are not allowed)");
  }
  return value;
}

template <class T>
void MatrixMarketParser<T>::check_triangle(Index row, Index col) const {
  const auto entry = [&] {
    return "entry (" + std::to_string(row + std::size_t{1}) + ", " + std::to_string(col + std::size_t{1}) +
           ")";
  };
  if (header_.symmetry == MatrixMarketSymmetry::symmetric && row < col) {
    fail(line_, entry() + " is above the diagonal: a symmetric file stores the lower triangle only");
  }
  if (header_.symmetry == MatrixMarketSymmetry::skew_symmetric && row <= col) {
    fail(line_,
         entry() + " is not below the diagonal: a skew-symmetric file stores the strict lower triangle only");
  }
}

template <class T>
void MatrixMarketParser<T>::parse_entry(std::string_view first, Tokens& tokens) {
  if (rows_.size() == header_.entries) {
    fail(line_, "more entries than the " + std::to_string(header_.entries) + " the size line declares");
  }
  const Index row = parse_index(first, "row", header_.rows);
  const Index col = parse_index(tokens.next(), "column", header_.cols);
  const bool pattern = header_.field == MatrixMarketField::pattern;
  const T value = pattern ? T(1) : parse_value(tokens.next());
  if (const auto extra = tokens.next(); !extra.empty()) {
    fail(line_, "unexpected " + quote(extra) +
                    (pattern ? " after the column index (a pattern entry is 'row column')"
                             : " after the value (an entry is 'row column value')"));
  }
  check_triangle(row, col);
  rows_.push_back(row);
  cols_.push_back(col);
  values_.push_back(value);
  mirrored_ += header_.symmetry != MatrixMarketSymmetry::general && row != col;
}

// Calls f(row, col, value) for every entry of the full matrix: the stored ones, in file order,
// each followed by its mirror image when the file stores one triangle.
template <class T>
template <class F>
void MatrixMarketParser<T>::for_each_expanded(F&& f) const {
  const bool mirror = header_.symmetry != MatrixMarketSymmetry::general;
  const bool negate = header_.symmetry == MatrixMarketSymmetry::skew_symmetric;
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    f(rows_[k], cols_[k], values_[k]);
    if (mirror && rows_[k] != cols_[k]) f(cols_[k], rows_[k], negate ? -values_[k] : values_[k]);
  }
}

// A counting sort by row, stable, so that each row holds its entries in file order. Counts
// become start offsets; moving an entry to its row's offset advances it, so that it ends as the
// row's end offset, and a shift by one restores the starts.
template <class T>
Csr<T> MatrixMarketParser<T>::build_csr() {
  const std::size_t total = rows_.size() + mirrored_;
  if (total > max_dimension_default) {
    fail(0, "the full matrix has " + std::to_string(total) +
                " entries, more than 32-bit indices (sparse::Index) allow");
  }
  Csr<T> a;
  a.rows = header_.rows;
  a.cols = header_.cols;
  a.row_ptr.assign(a.rows + 1, 0);
  for_each_expanded([&](Index row, Index, T) { ++a.row_ptr[row + 1]; });
  std::partial_sum(a.row_ptr.begin(), a.row_ptr.end(), a.row_ptr.begin());
  a.col.resize(total);
  a.values.resize(total);
  for_each_expanded([&](Index row, Index col, T value) {
    const Index at = a.row_ptr[row]++;
    a.col[at] = col;
    a.values[at] = value;
  });
  std::copy_backward(a.row_ptr.begin(), a.row_ptr.end() - 1, a.row_ptr.end());
  a.row_ptr[0] = 0;
  rows_ = {};
  cols_ = {};
  values_ = {};
  sort_rows_and_sum_duplicates(a);
  return a;
}

// Rows usually arrive sorted (files list entries by row or by column, and a symmetric file's
// mirror images then fall in order too): only the others are sorted, stably, so that duplicates
// are summed in file order.
template <class T>
void MatrixMarketParser<T>::sort_rows_and_sum_duplicates(Csr<T>& a) const {
  std::vector<std::pair<Index, T>> row_entries;
  Index kept = 0, begin = 0;
  for (std::size_t row = 0; row < a.rows; ++row) {
    const Index end = a.row_ptr[row + 1], row_begin = kept;
    if (!std::is_sorted(a.col.begin() + begin, a.col.begin() + end)) {
      row_entries.clear();
      for (Index k = begin; k < end; ++k) row_entries.emplace_back(a.col[k], a.values[k]);
      std::stable_sort(row_entries.begin(), row_entries.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      for (Index k = begin; k < end; ++k) std::tie(a.col[k], a.values[k]) = row_entries[k - begin];
    }
    for (Index k = begin; k < end; ++k) {
      if (kept > row_begin && a.col[kept - 1] == a.col[k]) {
        a.values[kept - 1] += a.values[k];
        if (!std::isfinite(a.values[kept - 1])) {
          fail(0, "the duplicates of entry (" + std::to_string(row + 1) + ", " +
                      std::to_string(a.col[k] + std::size_t{1}) + ") sum to " + shortest(a.values[kept - 1]) +
                      " in " + type_name<T>());
        }
      } else {
        a.col[kept] = a.col[k];
        a.values[kept] = a.values[k];
        ++kept;
      }
    }
    begin = end;
    a.row_ptr[row + 1] = kept;
  }
  a.col.resize(kept);
  a.values.resize(kept);
}

template class MatrixMarketParser<float>;
template class MatrixMarketParser<double>;

}  // namespace detail

namespace {

struct CloseFile {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

// The file's size when it is a regular file, else 0 (unknown).
std::size_t regular_file_size(std::FILE* file) {
  struct stat status {};
  if (::fstat(::fileno(file), &status) != 0 || !S_ISREG(status.st_mode)) return 0;
  return static_cast<std::size_t>(status.st_size);
}

[[noreturn]] void fail_writing(const std::string& what) {
  throw InvalidArgument("Matrix Market writer: " + what);
}

std::string position(std::size_t row, std::size_t col) {
  return "A(" + std::to_string(row) + ", " + std::to_string(col) + ")";
}

// The structure the writer relies on (sparse::validate checks more); finite values only.
template <class T>
void check_writable(const Csr<T>& a) {
  if (a.row_ptr.size() != a.rows + 1 || a.row_ptr[0] != 0) {
    fail_writing("row_ptr must have rows + 1 = " + std::to_string(a.rows + 1) + " entries starting at 0");
  }
  if (a.col.size() != a.row_ptr.back() || a.values.size() != a.row_ptr.back()) {
    fail_writing("col and values must have row_ptr[rows] = " + std::to_string(a.row_ptr.back()) +
                 " entries, not " + std::to_string(a.col.size()) + " and " + std::to_string(a.values.size()));
  }
  for (std::size_t row = 0; row < a.rows; ++row) {
    if (a.row_ptr[row + 1] < a.row_ptr[row] || a.row_ptr[row + 1] > a.col.size()) {
      fail_writing("row_ptr[" + std::to_string(row + 1) + "] = " + std::to_string(a.row_ptr[row + 1]) +
                   " is not between row_ptr[" + std::to_string(row) + "] and the entry count");
    }
    for (Index k = a.row_ptr[row]; k < a.row_ptr[row + 1]; ++k) {
      if (a.col[k] >= a.cols || (k > a.row_ptr[row] && a.col[k] <= a.col[k - 1])) {
        fail_writing("the columns of row " + std::to_string(row) + " are not strictly increasing inside 0.." +
                     std::to_string(a.cols) + " (0-based)");
      }
      if (!std::isfinite(a.values[k])) {
        fail_writing(position(row, a.col[k]) + " = " + shortest(a.values[k]) +
                     " (0-based): Matrix Market files hold finite values only");
      }
    }
  }
}

}  // namespace

template <class T>
MatrixMarketMatrix<T> read_matrix_market(const std::filesystem::path& path) {
  const std::unique_ptr<std::FILE, CloseFile> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    throw IoError("cannot open '" + path.string() + "': " + ziggurat::detail::system_error_text(errno));
  }
  detail::MatrixMarketParser<T> parser(path.string(), regular_file_size(file.get()));
  const std::unique_ptr<char[]> chunk(new char[kChunkBytes]);
  std::size_t read = 0;
  do {
    read = std::fread(chunk.get(), 1, kChunkBytes, file.get());
    if (std::ferror(file.get())) {
      throw IoError("cannot read '" + path.string() + "': " + ziggurat::detail::system_error_text(errno));
    }
    parser.feed(std::string_view(chunk.get(), read));
  } while (read == kChunkBytes);
  return parser.finish();
}

MatrixMarketHeader read_matrix_market_header(const std::filesystem::path& path) {
  const std::unique_ptr<std::FILE, CloseFile> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw IoError("cannot open '" + path.string() + "': " + ziggurat::detail::system_error_text(errno));
  detail::MatrixMarketParser<double> parser(path.string(), regular_file_size(file.get()));
  char chunk[4096];  // a header is a few lines: read no further than it
  for (bool ended = false; !parser.has_header();) {
    if (ended) parser.finish();  // throws: the file ends before its size line
    const std::size_t read = std::fread(chunk, 1, sizeof chunk, file.get());
    if (std::ferror(file.get())) {
      throw IoError("cannot read '" + path.string() + "': " + ziggurat::detail::system_error_text(errno));
    }
    ended = read == 0;
    std::string_view text = ended ? std::string_view("\n") : std::string_view(chunk, read);  // ends a last line
    while (!text.empty() && !parser.has_header()) {  // a line at a time: no entry is parsed
      const std::size_t line = std::min(text.find('\n'), text.size() - 1) + 1;
      parser.feed(text.substr(0, line));
      text.remove_prefix(line);
    }
  }
  return parser.header();
}

template <class T>
MatrixMarketMatrix<T> parse_matrix_market(std::string_view text, std::string_view name) {
  detail::MatrixMarketParser<T> parser(std::string(name), text.size());
  parser.feed(text);
  return parser.finish();
}

template <class T>
std::string format_matrix_market(const Csr<T>& a, MatrixMarketSymmetry symmetry) {
  if (symmetry == MatrixMarketSymmetry::skew_symmetric) {
    fail_writing("skew-symmetric output is not supported (write the matrix as general)");
  }
  check_writable(a);
  const bool lower_only = symmetry == MatrixMarketSymmetry::symmetric;
  if (lower_only) {
    if (a.rows != a.cols) {
      fail_writing("a symmetric matrix must be square, not " + std::to_string(a.rows) + " x " + std::to_string(a.cols));
    }
    const std::string asymmetric = asymmetry(a);
    if (!asymmetric.empty()) fail_writing("not symmetric: " + asymmetric + " (0-based)");
  }
  std::size_t written = 0;
  for (std::size_t row = 0; row < a.rows; ++row) {
    for (Index k = a.row_ptr[row]; k < a.row_ptr[row + 1]; ++k) written += !lower_only || a.col[k] <= row;
  }

  std::string out = std::string("%%MatrixMarket matrix coordinate real ") + symmetry_name(symmetry) +
                    "\n% written by ziggurat " + version + "\n" + std::to_string(a.rows) + " " +
                    std::to_string(a.cols) + " " + std::to_string(written) + "\n";
  out.reserve(out.size() + written * 32);
  for (std::size_t row = 0; row < a.rows; ++row) {
    for (Index k = a.row_ptr[row]; k < a.row_ptr[row + 1]; ++k) {
      if (lower_only && a.col[k] > row) continue;
      append_number(out, row + 1);
      out += ' ';
      append_number(out, a.col[k] + std::size_t{1});
      out += ' ';
      append_number(out, a.values[k]);
      out += '\n';
    }
  }
  return out;
}

template <class T>
void write_matrix_market(const std::filesystem::path& path, const Csr<T>& a, MatrixMarketSymmetry symmetry) {
  const std::string text = format_matrix_market(a, symmetry);
  write_file_atomically(path, text);
}

template MatrixMarketMatrix<float> read_matrix_market<float>(const std::filesystem::path&);
template MatrixMarketMatrix<double> read_matrix_market<double>(const std::filesystem::path&);
template MatrixMarketMatrix<float> parse_matrix_market<float>(std::string_view, std::string_view);
template MatrixMarketMatrix<double> parse_matrix_market<double>(std::string_view, std::string_view);
template std::string format_matrix_market<float>(const Csr<float>&, MatrixMarketSymmetry);
template std::string format_matrix_market<double>(const Csr<double>&, MatrixMarketSymmetry);
template void write_matrix_market<float>(const std::filesystem::path&, const Csr<float>&,
                                         MatrixMarketSymmetry);
template void write_matrix_market<double>(const std::filesystem::path&, const Csr<double>&,
                                          MatrixMarketSymmetry);

}  // namespace ziggurat::sparse
