#pragma once
// The internal part of io/matrix_market: the reader's core, shared by read_matrix_market (file
// chunks), parse_matrix_market (one buffer), the tests (text fed in tiny pieces, so that every
// line is split at every place) and the fuzzer (with a lower dimension limit).

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "ziggurat/io/matrix_market.hpp"

namespace ziggurat::sparse::detail {

/// Parses Matrix Market text fed in pieces of any size. Each complete line is parsed as soon as it
/// arrives, numbers straight into flat arrays; a partial last line waits for the next piece.
/// Every error is an IoError "<name>:<line>: <what>".
template <class T>
class MatrixMarketParser {
 public:
  static constexpr std::size_t max_dimension_default = std::numeric_limits<Index>::max();

  /// `input_bytes` (0: unknown) caps the memory reserved from the size line's entry count, so
  /// that a count the input cannot hold costs nothing. Row or column counts above
  /// `max_dimension` (at most the default) are refused: the fuzzer lowers it, because an honest
  /// empty 4e9 x 4e9 matrix still needs a 16 GB row_ptr.
  explicit MatrixMarketParser(std::string name, std::size_t input_bytes = 0,
                              std::size_t max_dimension = max_dimension_default);

  void feed(std::string_view text);
  /// Whether the banner and the size line have been parsed, and what they say.
  bool has_header() const noexcept { return stage_ == Stage::entries; }
  const MatrixMarketHeader& header() const noexcept { return header_; }
  /// Parses a last line that has no newline, checks the entry count and builds the CSR matrix.
  MatrixMarketMatrix<T> finish();

 private:
  class Tokens;
  enum class Stage { banner, size, entries };

  void parse_line(std::string_view line);
  void parse_banner(std::string_view line, std::string_view first, Tokens& tokens);
  void parse_size(std::string_view first, Tokens& tokens);
  void parse_entry(std::string_view first, Tokens& tokens);
  std::size_t parse_size_number(std::string_view token, const char* what) const;
  Index parse_index(std::string_view token, const char* what, std::size_t count) const;
  T parse_value(std::string_view token) const;
  void check_triangle(Index row, Index col) const;
  /// The most entries the input can hold (unbounded when its size is unknown).
  std::size_t entry_room() const;
  void reserve_entries();

  template <class F>
  void for_each_expanded(F&& f) const;
  Csr<T> build_csr();
  void sort_rows_and_sum_duplicates(Csr<T>& a) const;

  /// line 0: the error concerns the whole input, not one line.
  [[noreturn]] void fail(std::size_t line, const std::string& what) const;

  std::string name_;
  std::size_t input_bytes_, max_dimension_;
  Stage stage_ = Stage::banner;
  std::size_t line_ = 0;  ///< lines parsed so far (the number of the current line while parsing)
  std::string partial_;   ///< the start of a line whose end has not arrived yet
  MatrixMarketHeader header_;
  std::vector<Index> rows_, cols_;  ///< 0-based, one per stored entry, in file order
  std::vector<T> values_;
  std::size_t mirrored_ = 0;  ///< off-diagonal entries of a (skew-)symmetric file
};

}  // namespace ziggurat::sparse::detail
