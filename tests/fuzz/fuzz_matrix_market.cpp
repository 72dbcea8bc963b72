// libFuzzer target for the Matrix Market parser (run.sh builds and runs it). An exception other
// than ziggurat::Error, a crash or a sanitizer report is a bug. Beyond that, for float and double:
//   - the text fed in pieces gives the same matrix, or the same message, as the whole text;
//   - a matrix that parses writes out and reads back bit for bit (symmetric as symmetric).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "io/matrix_market.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/io/matrix_market.hpp"

namespace {

using namespace ziggurat;
using namespace ziggurat::sparse;

// Rows and columns allowed here: an honest empty 4e9 x 4e9 matrix still needs a 16 GB row_ptr,
// far over the fuzzer's memory limit. Inputs beyond it stop after the size line.
constexpr std::size_t kMaxDimension = std::size_t{1} << 16;
constexpr std::string_view kBeyondMaxDimension = "is larger than the 65536 rows";

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "BUG: %s\n", what.c_str());
  std::abort();
}

template <class T>
bool identical(const Csr<T>& a, const Csr<T>& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr && a.col == b.col &&
         a.values.size() == b.values.size() &&
         (a.values.empty() ||
          std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(T)) == 0);
}

// Parses with the dimension limit, in pieces of `piece` bytes; returns the error message or "".
template <class T>
std::string parse_in_pieces(std::string_view text, std::size_t piece, MatrixMarketMatrix<T>& result) {
  try {
    sparse::detail::MatrixMarketParser<T> parser("fuzz.mtx", 0, kMaxDimension);
    for (std::size_t at = 0; at < text.size(); at += piece) parser.feed(text.substr(at, piece));
    result = parser.finish();
    return {};
  } catch (const Error& error) {
    return error.what();
  }
}

template <class T>
void check_round_trip(const MatrixMarketMatrix<T>& read) {
  const auto symmetry = read.header.symmetry == MatrixMarketSymmetry::symmetric
                            ? MatrixMarketSymmetry::symmetric
                            : MatrixMarketSymmetry::general;
  try {
    const auto back = parse_matrix_market<T>(format_matrix_market(read.matrix, symmetry), "round trip");
    if (!identical(back.matrix, read.matrix)) bug("the written matrix reads back different");
  } catch (const Error& error) {
    bug(std::string("a parsed matrix does not round-trip: ") + error.what());
  }
}

template <class T>
void check(std::string_view text, std::size_t piece) {
  MatrixMarketMatrix<T> pieces, whole;
  const std::string pieces_error = parse_in_pieces(text, piece, pieces);
  if (pieces_error.find(kBeyondMaxDimension) != std::string::npos) return;
  std::string whole_error;
  try {
    whole = parse_matrix_market<T>(text, "fuzz.mtx");
  } catch (const Error& error) {
    whole_error = error.what();
  }
  if (whole_error != pieces_error) bug("in pieces: '" + pieces_error + "', whole: '" + whole_error + "'");
  if (!whole_error.empty()) return;
  if (!identical(whole.matrix, pieces.matrix)) bug("the matrix parsed in pieces differs");
  check_round_trip(whole);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t piece = 1 + size % 29;  // varies with the input, crosses lines everywhere
  check<double>(text, piece);
  check<float>(text, piece);
  return 0;
}
