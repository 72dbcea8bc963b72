// The .npz writer: a zip of stored .npy entries with fixed dates, and its refusals. (NumPy and
// Python's zipfile read the files back, every entry's CRC-32 checked, in tests/cli/test_vtk.py.)

#include <doctest/doctest.h>

#include <cstdint>

#include "../support/util.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/io/npz.hpp"

using namespace ziggurat;
using test::TempDir;

namespace {

std::uint32_t u32_at(const std::string& bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) value |= std::uint32_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return value;
}

}  // namespace

TEST_CASE("an .npz stores each array as NAME.npy, uncompressed, and the same arrays give the same bytes") {
  TempDir dir;
  const std::vector<double> values = {1.5, -2.25, 3e300};
  const std::vector<NpzArray> arrays = {npz_values("data", values.data(), {3}), npz_scalar("dt", 0.125),
                                        npz_texts("components", {"ux", "uz"})};
  write_npz(dir / "a.npz", arrays);
  write_npz(dir / "b.npz", arrays);
  const std::string bytes = test::read_bytes(dir / "a.npz");
  CHECK(bytes == test::read_bytes(dir / "b.npz"));
  CHECK(bytes.substr(0, 4) == "PK\x03\x04");
  CHECK(u32_at(bytes, 8) == 0);  // method 0 (stored), and the time field
  CHECK(bytes.substr(30, 8) == "data.npy");
  const std::string entry = bytes.substr(38, u32_at(bytes, 22));  // the uncompressed size
  CHECK(entry.substr(0, 6) == "\x93NUMPY");
  CHECK(entry.find("'descr': '<f8'") != std::string::npos);
  CHECK(entry.substr(entry.size() - 24) == std::string(reinterpret_cast<const char*>(values.data()), 24));
  CHECK(bytes.substr(bytes.size() - 22, 4) == "PK\x05\x06");  // the end of the central directory
  CHECK(static_cast<unsigned char>(bytes[bytes.size() - 12]) == 3);  // 3 entries
}

TEST_CASE("an .npz refuses repeated or empty names and text outside ASCII") {
  TempDir dir;
  const double one = 1;
  CHECK_THROWS_WITH_AS(write_npz(dir / "x.npz", {npz_scalar("dt", 1), npz_values("dt", &one, {1})}),
                       doctest::Contains("distinct, non-empty names ('dt')"), InvalidArgument);
  CHECK_THROWS_AS(write_npz(dir / "x.npz", {npz_scalar("", 1)}), InvalidArgument);
  CHECK_THROWS_WITH_AS(npz_texts("units", {"\xc2\xb5s"}), doctest::Contains("is not ASCII"), InvalidArgument);
  CHECK_THROWS_AS(npz_texts("unit", {"m", "s"}, true), InvalidArgument);
  CHECK_FALSE(std::filesystem::exists(dir / "x.npz"));
}
