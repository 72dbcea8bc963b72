// The .npy reader and writer: round trips, conversions, and every kind of bad file.
// (tests/cli/test_heat.py and the other CLI tests check the same files against NumPy itself.)

#include <doctest/doctest.h>

#include <cstring>

#include "../support/util.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/io/npy.hpp"

using namespace ziggurat;
using test::TempDir;

namespace {

// A .npy file with the given header dict and data bytes (version 1 or 2 layout).
std::string npy_file(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  const std::size_t prefix = major == 1 ? 10 : 12;
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header += '\n';
  std::string file = "\x93NUMPY";
  file += static_cast<char>(major);
  file += '\0';
  for (std::size_t i = 0; i < prefix - 8; ++i) file += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return file + header + data;
}

template <class T>
std::string raw(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

void check_rejected(const TempDir& dir, const std::string& bytes, const std::string& expected) {
  const auto path = dir / "bad.npy";
  test::write_bytes(path, bytes);
  CAPTURE(expected);
  CHECK_THROWS_WITH_AS(load_grid<double>(path), doctest::Contains(expected.c_str()), IoError);
}

}  // namespace

TEST_CASE_TEMPLATE("npy round trip keeps every bit, shape and a 64-byte aligned header", T, float, double) {
  TempDir dir;
  for (const auto& shape : std::vector<std::vector<std::size_t>>{{5}, {3, 4}, {2, 3, 4}, {1, 1}}) {
    std::vector<T> values;
    std::size_t count = 1;
    for (auto e : shape) count *= e;
    for (std::size_t i = 0; i < count; ++i) values.push_back(static_cast<T>(std::sin(1.0 + i) * 1e3 / 7.0));
    const auto path = dir / "a.npy";
    write_npy(path, values.data(), shape);
    const auto header = read_npy_header(path);
    CHECK(header.shape == shape);
    CHECK(header.data_offset % 64 == 0);
    std::vector<std::size_t> read_shape;
    const auto back = read_npy<T>(path, read_shape);
    CHECK(read_shape == shape);
    REQUIRE(back.size() == values.size());
    CHECK(std::memcmp(back.data(), values.data(), values.size() * sizeof(T)) == 0);
  }
  CHECK(test::count_files(dir.path(), ".tmp") == 0);
}

TEST_CASE("grids map to arrays with reversed extents") {
  TempDir dir;
  Grid<float> grid({4, 3});  // W = 4, H = 3
  for (std::size_t y = 0; y < 3; ++y) {
    for (std::size_t x = 0; x < 4; ++x) grid(x, y) = static_cast<float>(10 * y + x);
  }
  save_grid(dir / "g.npy", grid);
  CHECK(read_npy_header(dir / "g.npy").shape == std::vector<std::size_t>{3, 4});
  const auto back = load_grid<float>(dir / "g.npy");
  CHECK(back.extents() == grid.extents());
  CHECK(back(3, 2) == 23.0f);
  CHECK(back.values() == grid.values());

  Grid<double> cube({2, 3, 4});
  save_grid(dir / "c.npy", cube);
  CHECK(read_npy_header(dir / "c.npy").shape == std::vector<std::size_t>{4, 3, 2});
}

TEST_CASE("float32 and float64 files convert to the requested type") {
  TempDir dir;
  const std::vector<double> values = {0.1, -2.5, 1e-3, 3.0};
  write_npy(dir / "d.npy", values.data(), {4});
  std::vector<std::size_t> shape;
  const auto as_float = read_npy<float>(dir / "d.npy", shape);
  CHECK(as_float[0] == 0.1f);
  CHECK(as_float[2] == 1e-3f);
  const std::vector<float> singles = {0.1f, 7.0f};
  write_npy(dir / "f.npy", singles.data(), {2});
  const auto as_double = read_npy<double>(dir / "f.npy", shape);
  CHECK(as_double[0] == static_cast<double>(0.1f));
}

TEST_CASE("version 2.0 and 3.0 headers and Python 2 style shapes are read") {
  TempDir dir;
  const std::vector<double> data = {1, 2, 3, 4, 5, 6};
  for (int major : {2, 3}) {
    test::write_bytes(dir / "v.npy", npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", raw(data), major));
    const auto grid = load_grid<double>(dir / "v.npy");
    CHECK(grid.extents() == std::vector<std::size_t>{3, 2});
    CHECK(grid(2, 1) == 6.0);
  }
  test::write_bytes(dir / "p.npy", npy_file("{\"descr\": \"<f8\", \"shape\": (2L, 3L), \"fortran_order\": False}", raw(data)));
  CHECK(load_grid<double>(dir / "p.npy").extents() == std::vector<std::size_t>{3, 2});
}

TEST_CASE("bad .npy files are clear errors naming the problem") {
  TempDir dir;
  const std::string d6 = raw(std::vector<double>(6, 1.0));
  const auto header = [](const std::string& descr, const std::string& order, const std::string& shape) {
    return "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
  };
  CHECK_THROWS_WITH_AS(load_grid<double>(dir / "missing.npy"), doctest::Contains("cannot open"), IoError);
  check_rejected(dir, "", "magic string");
  check_rejected(dir, "PK\x03\x04 this is a zip file", "magic string");
  check_rejected(dir, npy_file(header("<f8", "False", "(2, 3)"), d6).replace(6, 1, "\x04"), "format version 4.0");
  check_rejected(dir, npy_file(header("<f8", "False", "(2, 3)"), d6).substr(0, 40), "ends inside its header");
  check_rejected(dir, npy_file("not a dict", d6), "expected '{'");
  check_rejected(dir, npy_file(header("<i4", "False", "(2, 3)"), d6), "dtype is '<i4'");
  check_rejected(dir, npy_file(header("<c16", "False", "(2, 3)"), d6), "float64 ('<f8')");
  check_rejected(dir, npy_file(header(">f8", "False", "(2, 3)"), d6), "big-endian");
  check_rejected(dir, npy_file(header("<f8", "True", "(2, 3)"), d6), "Fortran order");
  check_rejected(dir, npy_file(header("<f8", "Maybe", "(2, 3)"), d6), "expected True or False");
  check_rejected(dir, npy_file(header("<f8", "False", "(2, -3)"), d6), "non-negative integer");
  check_rejected(dir, npy_file("{'descr': '<f8', 'fortran_order': False}", d6), "no 'shape'");
  check_rejected(dir, npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), 'extra': 1}", d6),
                 "unexpected key 'extra'");
  check_rejected(dir, npy_file("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (6,)}", d6),
                 "appears twice");
  check_rejected(dir, npy_file(header("<f8", "False", "(2, 3)") + " trailing", d6), "text after its closing '}'");
  check_rejected(dir, npy_file(header("<f8", "False", "(2, 3)"), d6.substr(0, 40)), "truncated");
  check_rejected(dir, npy_file(header("<f8", "False", "(2, 3)"), d6 + "xx"), "2 bytes after the data");
  check_rejected(dir, npy_file(header("<f8", "False", "(1, 1, 2, 3)"), d6), "1-, 2- or 3-dimensional");
  check_rejected(dir, npy_file(header("<f8", "False", "()"), raw(std::vector<double>{1.0})), "1-, 2- or 3-dimensional");
  check_rejected(dir, npy_file(header("<f8", "False", "(0, 3)"), ""), "holds no values");
  check_rejected(dir, npy_file(header("<f8", "False", "(99999999999, 99999999999)"), d6), "too large");
}

TEST_CASE("a header longer than the file is refused before the header is read") {
  TempDir dir;
  std::string file = "\x93NUMPY\x02";  // version 2: a 4-byte header length
  file += std::string("\0\xff\xff\xff\xff", 5);  // 4 GiB
  file += "{'descr'";  // 20 bytes in all
  REQUIRE(file.size() == 20);
  check_rejected(dir, file, "the header declares 4294967295 bytes, the file has 20");
}

TEST_CASE("writing is atomic: a failed write leaves nothing behind, a new file replaces the old whole") {
  TempDir dir;
  const std::vector<float> values = {1, 2, 3};
  CHECK_THROWS_WITH_AS(write_npy(dir / "no-such-folder" / "x.npy", values.data(), {3}),
                       doctest::Contains("cannot create"), IoError);
  test::write_bytes(dir / "x.npy", std::string(10000, 'z'));
  write_npy(dir / "x.npy", values.data(), {3});
  std::vector<std::size_t> shape;
  CHECK(read_npy<float>(dir / "x.npy", shape) == values);
  CHECK(test::count_files(dir.path(), ".tmp") == 0);
}

TEST_CASE_TEMPLATE("a file written in rows by several writers, and grids read by rows", T, float, double) {
  TempDir dir;
  const std::vector<std::size_t> shape{7, 3, 4};  // 7 planes of 3 x 4
  std::vector<T> values(7 * 12);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(std::sin(0.7 * double(i)) * 1e3);
  const auto path = dir / "parts.npy";
  create_npy<T>(path, shape);
  // Out of order, as processes finish: rows 4..6, then 0..3.
  write_npy_rows<T>(path, 4, values.data() + 4 * 12, 3);
  write_npy_rows<T>(path, 0, values.data(), 4);
  std::vector<std::size_t> read_shape;
  CHECK(read_npy<T>(path, read_shape) == values);
  CHECK(read_shape == shape);
  // The same bytes as one writer's file.
  write_npy(dir / "whole.npy", values.data(), shape);
  CHECK(test::read_bytes(path) == test::read_bytes(dir / "whole.npy"));
  const Grid<T> middle = load_grid_rows<T>(path, 2, 3);
  CHECK(middle.extents() == std::vector<std::size_t>{4, 3, 3});
  CHECK(middle.values() == std::vector<T>(values.begin() + 24, values.begin() + 60));
  CHECK_THROWS_WITH_AS(write_npy_rows<T>(path, 6, values.data(), 2), doctest::Contains("do not fit"), IoError);
  CHECK_THROWS_WITH_AS(load_grid_rows<T>(path, 5, 3), doctest::Contains("outside"), IoError);
  CHECK_THROWS_AS(write_npy_rows<T>(dir / "missing.npy", 0, values.data(), 1), IoError);
}
