// The VTK XML writer's refusals. (VTK's own readers read every file back, bit for bit, in
// tests/cli/test_vtk.py and python/tests/test_vtk.py.)

#include <doctest/doctest.h>

#include "../support/util.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/io/vtk.hpp"

using namespace ziggurat;
using test::TempDir;

TEST_CASE("a mesh of hexahedra refuses points, cells or arrays that do not fit") {
  TempDir dir;
  const std::vector<double> points(3 * 8, 0.0);
  std::vector<std::int64_t> cell = {0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<float> u(8, 1.0f);
  const auto write = [&](const std::vector<double>& p, const std::vector<std::int64_t>& c, std::size_t components) {
    vtk::write_hexahedra<float>(dir / "m.vtu", p, c, {{"u", u.data(), components}});
  };
  CHECK_THROWS_WITH_AS(write({0, 0}, cell, 1), doctest::Contains("3 coordinates"), InvalidArgument);
  CHECK_THROWS_WITH_AS(write(points, {0, 1, 2}, 1), doctest::Contains("8 points"), InvalidArgument);
  cell[7] = 8;
  CHECK_THROWS_WITH_AS(write(points, cell, 1), doctest::Contains("names point 8 of a mesh of 8 points"),
                       InvalidArgument);
  cell[7] = 7;
  CHECK_THROWS_WITH_AS(write(points, cell, 0), doctest::Contains("at least one component"), InvalidArgument);
  CHECK_FALSE(std::filesystem::exists(dir / "m.vtu"));
  write(points, cell, 1);
  CHECK(test::read_bytes(dir / "m.vtu").find("<DataArray type=\"Float32\" Name=\"u\"") != std::string::npos);
}
