#include "ziggurat/matrix/model_problems.hpp"

#include <array>
#include <limits>
#include <string>

#include "base/parallel.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/hex_mesh.hpp"

namespace ziggurat::sparse {

namespace {

constexpr std::array<std::pair<ModelProblem, const char*>, 5> kNames{{{ModelProblem::laplace7, "laplace7"},
                                                                      {ModelProblem::laplace27, "laplace27"},
                                                                      {ModelProblem::anisotropic, "anisotropic"},
                                                                      {ModelProblem::upwind, "upwind"},
                                                                      {ModelProblem::elasticity, "elasticity"}}};

// A stencil's couplings: the value of the neighbour at offset (dx, dy, dz), each in -1..1.
struct Stencil {
  double centre = 0;
  std::array<double, 27> coupling{};  // (dx + 1) + 3 (dy + 1) + 9 (dz + 1); the centre's unused
  double& at(int dx, int dy, int dz) { return coupling[std::size_t((dx + 1) + 3 * (dy + 1) + 9 * (dz + 1))]; }
};

Stencil stencil_of(ModelProblem problem) {
  Stencil s;
  const auto seven = [&](double x, double y, double z) {
    s.centre = 2 * (x + y + z);
    s.at(-1, 0, 0) = s.at(1, 0, 0) = -x;
    s.at(0, -1, 0) = s.at(0, 1, 0) = -y;
    s.at(0, 0, -1) = s.at(0, 0, 1) = -z;
  };
  switch (problem) {
    case ModelProblem::laplace7: seven(1, 1, 1); break;
    case ModelProblem::anisotropic: seven(1, 1, 100); break;
    case ModelProblem::upwind: {
      constexpr double c = 5;  // convection along +x, +y, +z: the upstream neighbour carries it
      seven(1, 1, 1);
      s.centre += 3 * c;
      s.at(-1, 0, 0) -= c, s.at(0, -1, 0) -= c, s.at(0, 0, -1) -= c;
      break;
    }
    case ModelProblem::laplace27:
      s.centre = 26;
      s.coupling.fill(-1);
      break;
    case ModelProblem::elasticity: break;
  }
  return s;
}

// The scalar operator of a stencil: each row's couplings to the neighbours inside the grid, in
// increasing column order (z, then y, then x offsets), zeros left out; rows built on every core.
template <class T>
Bsr<T> stencil_matrix(const Stencil& s, std::size_t nx, std::size_t ny, std::size_t nz) {
  const std::size_t n = nx * ny * nz;
  if (n > std::size_t(std::numeric_limits<std::int32_t>::max()))
    throw InvalidArgument("a model problem of " + std::to_string(n) + " unknowns: at most 2^31 - 1");
  Bsr<T> a;
  a.rows = a.cols = a.block_rows = a.block_cols = n;
  a.block_size = 1;
  const auto neighbours = [&](std::size_t row, auto add) {
    const std::size_t x = row % nx, y = row / nx % ny, z = row / (nx * ny);
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const double v = dx == 0 && dy == 0 && dz == 0 ? s.centre : s.coupling[std::size_t((dx + 1) + 3 * (dy + 1) + 9 * (dz + 1))];
          if (v == 0 || (x == 0 && dx < 0) || (x + 1 == nx && dx > 0) || (y == 0 && dy < 0) || (y + 1 == ny && dy > 0) ||
              (z == 0 && dz < 0) || (z + 1 == nz && dz > 0))
            continue;
          add(Index(std::int64_t(row) + dx + std::int64_t(nx) * (dy + std::int64_t(ny) * dz)), v);
        }
  };
  a.block_row_ptr.assign(n + 1, 0);
  detail::for_chunks(n, 4096, [&](std::size_t first, std::size_t last) {
    for (std::size_t r = first; r < last; ++r) neighbours(r, [&](Index, double) { ++a.block_row_ptr[r + 1]; });
  });
  for (std::size_t r = 0; r < n; ++r) a.block_row_ptr[r + 1] += a.block_row_ptr[r];
  a.block_col.resize(a.block_row_ptr.back());
  a.values.resize(a.block_row_ptr.back());
  detail::for_chunks(n, 4096, [&](std::size_t first, std::size_t last) {
    for (std::size_t r = first; r < last; ++r) {
      std::size_t at = a.block_row_ptr[r];
      neighbours(r, [&](Index column, double v) {
        a.block_col[at] = column;
        a.values[at++] = static_cast<T>(v);
      });
    }
  });
  return a;
}

}  // namespace

const char* to_string(ModelProblem problem) {
  for (const auto& [p, name] : kNames)
    if (p == problem) return name;
  return "?";
}

ModelProblem parse_model_problem(std::string_view text) {
  for (const auto& [p, name] : kNames)
    if (text == name) return p;
  throw InvalidArgument("unknown model problem '" + std::string(text) +
                        "': use laplace7, laplace27, anisotropic, upwind or elasticity");
}

std::size_t model_problem_block_size(ModelProblem problem) { return problem == ModelProblem::elasticity ? 3 : 1; }

template <class T>
Bsr<T> model_problem(ModelProblem problem, std::size_t nx, std::size_t ny, std::size_t nz) {
  if (nx == 0 || ny == 0 || nz == 0) throw InvalidArgument("a model problem needs at least one node along each axis");
  if (problem != ModelProblem::elasticity) return stencil_matrix<T>(stencil_of(problem), nx, ny, nz);
  const fem::ElasticModel<T> cube = fem::box_model<T>({1, 1, 1, nx, ny, nz}, {}, fem::Face::x_min);
  return fem::assemble_bsr(cube.stiffness, 3);
}

#define ZIGGURAT_MODEL_PROBLEM(T) \
  template Bsr<T> model_problem<T>(ModelProblem, std::size_t, std::size_t, std::size_t);
ZIGGURAT_MODEL_PROBLEM(float)
ZIGGURAT_MODEL_PROBLEM(double)
#undef ZIGGURAT_MODEL_PROBLEM

}  // namespace ziggurat::sparse
