// The generated brick models (matrix/hex_mesh.hpp): the element stiffness against the rigid-body
// modes, linear displacement fields and their strain energy, the consistent and lumped masses,
// the DOF numbering and element indices of boxes, the validation and text parsers, and the roots
// behind the Euler-Bernoulli frequencies.

#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/elements.hpp"
#include "ziggurat/matrix/hex_mesh.hpp"

using namespace ziggurat;
using namespace ziggurat::fem;

namespace {

constexpr double kHx = 0.5, kHy = 0.3, kHz = 0.2;  // unequal sides, so that no axis mix-up cancels
const Material kSteel{210e9, 0.3, 7850};

// The local node order of the header, as offsets in x, y, z.
constexpr int kCorner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};

using Matrix = Eigen::Matrix<double, 24, 24>;
using Vector = Eigen::Matrix<double, 24, 1>;

Matrix as_matrix(const std::array<double, 576>& a) {
  Matrix m;
  for (int r = 0; r < 24; ++r)
    for (int c = 0; c < 24; ++c) m(r, c) = a[r * 24 + c];
  return m;
}

// The nodal values of the linear field u(x) = g x (g 3 x 3 row-major) on the brick.
Vector linear_field(const std::array<double, 9>& g) {
  Vector u;
  for (int a = 0; a < 8; ++a) {
    const double x[3] = {kCorner[a][0] * kHx, kCorner[a][1] * kHy, kCorner[a][2] * kHz};
    for (int d = 0; d < 3; ++d) u(3 * a + d) = g[3 * d] * x[0] + g[3 * d + 1] * x[1] + g[3 * d + 2] * x[2];
  }
  return u;
}

// The 6 rigid-body motions: translations along x, y, z and rotations about them (u = w x x).
std::vector<Vector> rigid_body_modes() {
  std::vector<Vector> modes;
  for (int d = 0; d < 3; ++d) {
    std::array<double, 9> zero{};
    Vector t = linear_field(zero);
    for (int a = 0; a < 8; ++a) t(3 * a + d) = 1;
    modes.push_back(t);
  }
  modes.push_back(linear_field({0, 0, 0, 0, 0, -1, 0, 1, 0}));  // about x: (0, -z, y)
  modes.push_back(linear_field({0, 0, 1, 0, 0, 0, -1, 0, 0}));  // about y: (z, 0, -x)
  modes.push_back(linear_field({0, -1, 0, 1, 0, 0, 0, 0, 0}));  // about z: (-y, x, 0)
  return modes;
}

// sigma : eps / 2 for the constant strain of u = g x, by the isotropic law written out.
double energy_density(const std::array<double, 9>& g, const Material& m) {
  const double lambda = m.young * m.poisson / ((1 + m.poisson) * (1 - 2 * m.poisson));
  const double mu = m.young / (2 * (1 + m.poisson));
  double trace = 0, squares = 0;
  for (int r = 0; r < 3; ++r) {
    trace += g[4 * r];
    for (int c = 0; c < 3; ++c) squares += std::pow((g[3 * r + c] + g[3 * c + r]) / 2, 2);
  }
  return (lambda * trace * trace + 2 * mu * squares) / 2;
}

// The value of L(r, c) in a packed upper triangle of l = 24.
template <class T>
T packed(const std::vector<T>& values, std::size_t element, std::size_t r, std::size_t c) {
  if (r > c) std::swap(r, c);
  return values[element * 300 + r * (2 * 24 - r + 1) / 2 + (c - r)];
}

}  // namespace

TEST_CASE("brick stiffness: symmetric, the six rigid-body modes its null space, every other eigenvalue positive") {
  const Matrix k = as_matrix(brick_stiffness(kHx, kHy, kHz, kSteel));
  const double scale = k.cwiseAbs().maxCoeff();
  CHECK((k - k.transpose()).cwiseAbs().maxCoeff() == 0);
  for (const Vector& r : rigid_body_modes()) CHECK((k * r).norm() <= 1e-9 * scale * r.norm());
  const Eigen::SelfAdjointEigenSolver<Matrix> eigen(k);
  const auto& values = eigen.eigenvalues();  // ascending
  for (int i = 0; i < 6; ++i) CHECK(std::abs(values(i)) <= 1e-9 * values(23));
  CHECK(values(6) > 1e-3 * values(23));
}

TEST_CASE("brick stiffness: linear fields store the strain energy of their constant stress") {
  const Matrix k = as_matrix(brick_stiffness(kHx, kHy, kHz, kSteel));
  const double volume = kHx * kHy * kHz;
  const std::array<double, 9> fields[] = {
      {1e-3, 0, 0, 0, 0, 0, 0, 0, 0},              // stretch along x
      {0, 0, 0, 0, 0, 0, 0, 0, 2e-3},              // stretch along z
      {0, 1e-3, 0, 0, 0, 0, 0, 0, 0},              // simple shear
      {1e-3, 2e-4, -3e-4, 5e-4, -2e-3, 1e-4, 7e-4, 4e-4, 1.5e-3},  // everything at once
  };
  for (const auto& g : fields) {
    const Vector u = linear_field(g);
    const double want = volume * energy_density(g, kSteel);
    CHECK(u.dot(k * u) / 2 == doctest::Approx(want).epsilon(1e-12));
  }
}

TEST_CASE("brick stiffness: a uniaxial strain with lateral motion prevented pushes the x = hx face by E_eff eps area") {
  const double eps = 1e-3, nu = kSteel.poisson;
  const Vector f = as_matrix(brick_stiffness(kHx, kHy, kHz, kSteel)) * linear_field({eps, 0, 0, 0, 0, 0, 0, 0, 0});
  double pushed = 0, pulled = 0;
  for (int a = 0; a < 8; ++a) (kCorner[a][0] == 1 ? pushed : pulled) += f(3 * a);
  const double e_eff = kSteel.young * (1 - nu) / ((1 + nu) * (1 - 2 * nu));
  CHECK(pushed == doctest::Approx(e_eff * eps * kHy * kHz).epsilon(1e-12));
  CHECK(pulled == doctest::Approx(-pushed).epsilon(1e-12));
}

TEST_CASE("brick mass: consistent and lumped both carry rho V along each axis; lumped is diagonal, consistent definite") {
  const double volume = kHx * kHy * kHz, rho = kSteel.density;
  const Matrix consistent = as_matrix(brick_mass(kHx, kHy, kHz, rho, MassKind::consistent));
  const Matrix lumped = as_matrix(brick_mass(kHx, kHy, kHz, rho, MassKind::lumped));
  const std::vector<Vector> modes = rigid_body_modes();
  for (int d = 0; d < 3; ++d) {
    CHECK(modes[d].dot(consistent * modes[d]) == doctest::Approx(rho * volume).epsilon(1e-13));
    CHECK(modes[d].dot(lumped * modes[d]) == doctest::Approx(rho * volume).epsilon(1e-13));
  }
  CHECK((consistent - consistent.transpose()).cwiseAbs().maxCoeff() == 0);
  // The integral of N_a^2 is V (1/3)^3: the 2x2x2 rule is exact for these products.
  for (int r = 0; r < 24; ++r) CHECK(consistent(r, r) == doctest::Approx(rho * volume / 27).epsilon(1e-13));
  CHECK(consistent(0, 1) == 0);  // ux and uy never couple
  CHECK(Eigen::SelfAdjointEigenSolver<Matrix>(consistent).eigenvalues()(0) > 0);
  for (int r = 0; r < 24; ++r) {
    for (int c = 0; c < 24; ++c) {
      CHECK(lumped(r, c) == (r == c ? doctest::Approx(rho * volume / 8).epsilon(1e-13) : doctest::Approx(0)));
    }
  }
}

TEST_CASE("brick matrices reject non-positive sides, E or rho and nu outside (-1, 0.5)") {
  CHECK_THROWS_WITH_AS(brick_stiffness(0, 1, 1, kSteel), doctest::Contains("hx is 0"), InvalidArgument);
  CHECK_THROWS_WITH_AS(brick_stiffness(1, 1, 1, {210e9, 0.5, 7850}), doctest::Contains("(-1, 0.5)"), InvalidArgument);
  CHECK_THROWS_WITH_AS(brick_stiffness(1, 1, 1, {-1, 0.3, 7850}), doctest::Contains("Young's modulus"), InvalidArgument);
  CHECK_THROWS_WITH_AS(brick_mass(1, -2, 1, 7850, MassKind::lumped), doctest::Contains("hy is -2"), InvalidArgument);
  CHECK_THROWS_WITH_AS(brick_mass(1, 1, 1, NAN, MassKind::lumped), doctest::Contains("density"), InvalidArgument);
}

TEST_CASE("box model: one brick clamped at z = 0 has the hand-numbered DOFs of its top nodes") {
  const auto model = box_model<double>(BoxMesh{kHx, kHy, kHz, 1, 1, 1}, kSteel, Face::z_min);
  // Top nodes 4 (0,0,1), 5 (1,0,1), 6 (0,1,1), 7 (1,1,1) take DOFs 0..11 in node order; the
  // local order visits them as 4, 5, 7, 6.
  const std::vector<std::int32_t> indices = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                             0,  1,  2,  3,  4,  5,  9,  10, 11, 6,  7,  8};
  CHECK(model.stiffness.indices == indices);
  CHECK(model.mass.indices == indices);
  CHECK(model.stiffness.dofs == 12);
  CHECK(model.node_dofs == std::vector<std::int32_t>{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                                     0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11});
}

TEST_CASE_TEMPLATE("box model: free DOFs node after node, clamped faces -1, element indices in the header's node order", T,
                   float, double) {
  const BoxMesh box{1.2, 0.6, 0.4, 4, 3, 2};
  const unsigned clamped = Face::x_min | Face::y_max;
  const auto model = box_model<T>(box, kSteel, clamped, MassKind::lumped);
  const std::size_t px = box.nx + 1, py = box.ny + 1;
  REQUIRE(model.node_dofs.size() == 3 * box.nodes());
  std::int32_t next = 0;
  for (std::size_t node = 0; node < box.nodes(); ++node) {
    const std::size_t i = node % px, j = node / px % py;
    const bool fixed = i == 0 || j == box.ny;
    for (std::size_t d = 0; d < 3; ++d) CHECK(model.node_dofs[3 * node + d] == (fixed ? -1 : next++));
  }
  CHECK(std::size_t(next) == 3 * box.nx * box.ny * (box.nz + 1));  // free nodes: 4 x 3 x 3
  for (const ElementSet<T>* set : {&model.stiffness, &model.mass}) {
    CHECK(set->dofs == std::size_t(next));
    CHECK(set->element_size == 24);
    CHECK(set->storage == ElementStorage::upper);
    CHECK(set->count() == box.elements());
    CHECK(set->matrices.size() == box.elements() * 300);
    CHECK_NOTHROW(validate(*set));
  }
  // Element e = i + nx (j + ny l); its local node a lies at corner offsets kCorner[a].
  for (std::size_t e = 0; e < box.elements(); ++e) {
    const std::size_t i = e % box.nx, j = e / box.nx % box.ny, l = e / (box.nx * box.ny);
    for (std::size_t a = 0; a < 8; ++a) {
      const std::size_t node = (i + kCorner[a][0]) + px * ((j + kCorner[a][1]) + py * (l + kCorner[a][2]));
      for (std::size_t d = 0; d < 3; ++d) CHECK(model.stiffness.indices[e * 24 + 3 * a + d] == model.node_dofs[3 * node + d]);
    }
  }
}

TEST_CASE_TEMPLATE("box model: every element holds the brick matrices rounded to T", T, float, double) {
  const BoxMesh box{2, 0.3, 0.2, 4, 3, 2};
  const auto model = box_model<T>(box, kSteel, Face::x_min | Face::x_max);
  const double hx = box.lx / box.nx, hy = box.ly / box.ny, hz = box.lz / box.nz;
  const auto k = brick_stiffness(hx, hy, hz, kSteel);
  const auto m = brick_mass(hx, hy, hz, kSteel.density, MassKind::consistent);
  for (std::size_t e = 0; e < box.elements(); ++e) {
    for (std::size_t r = 0; r < 24; ++r) {
      for (std::size_t c = 0; c < 24; ++c) {
        CHECK(packed(model.stiffness.matrices, e, r, c) == T(k[r * 24 + c]));
        CHECK(packed(model.mass.matrices, e, r, c) == T(m[r * 24 + c]));
      }
    }
  }
}

TEST_CASE("box model: the lumped mass of a free node is rho h^3 / 8 for each brick around it") {
  const BoxMesh box{3, 2, 1, 3, 2, 1};  // unit bricks
  const auto model = box_model<double>(box, kSteel, Face::z_min, MassKind::lumped);
  std::vector<double> diagonal(model.mass.dofs, 0.0);
  for (std::size_t e = 0; e < model.mass.count(); ++e) {
    for (std::size_t r = 0; r < 24; ++r) {
      const std::int32_t dof = model.mass.indices[e * 24 + r];
      if (dof >= 0) diagonal[dof] += packed(model.mass.matrices, e, r, r);
    }
  }
  const std::size_t px = box.nx + 1, py = box.ny + 1;
  for (std::size_t node = 0; node < box.nodes(); ++node) {
    const std::size_t i = node % px, j = node / px % py, l = node / (px * py);
    const auto sharing = [](std::size_t at, std::size_t n) { return at == 0 || at == n ? 1.0 : 2.0; };
    const double bricks = sharing(i, box.nx) * sharing(j, box.ny) * sharing(l, box.nz);
    for (std::size_t d = 0; d < 3; ++d) {
      const std::int32_t dof = model.node_dofs[3 * node + d];
      CHECK((dof < 0) == (l == 0));
      if (dof >= 0) CHECK(diagonal[dof] == doctest::Approx(kSteel.density * bricks / 8).epsilon(1e-14));
    }
  }
}

TEST_CASE("box model and cantilever reject zero divisions, bad lengths and materials, and unclamped boxes") {
  const BoxMesh good{2, 0.1, 0.1, 4, 1, 1};
  CHECK(cantilever<float>(good, kSteel).clamped == Face::x_min);
  CHECK_THROWS_WITH_AS(cantilever<double>(BoxMesh{2, 0.1, 0.1, 4, 0, 1}, kSteel), doctest::Contains("at least one division"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(cantilever<double>(BoxMesh{-2, 0.1, 0.1, 4, 1, 1}, kSteel), doctest::Contains("lx is -2"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(cantilever<double>(BoxMesh{2, 0.1, INFINITY, 4, 1, 1}, kSteel), doctest::Contains("lz is inf"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(cantilever<double>(good, {210e9, 0.5, 7850}), doctest::Contains("nu (Material::poisson) is 0.5"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(cantilever<double>(good, {210e9, -1, 7850}), doctest::Contains("(-1, 0.5)"), InvalidArgument);
  CHECK_THROWS_WITH_AS(cantilever<double>(good, {210e9, 0.3, 0}), doctest::Contains("density"), InvalidArgument);
  CHECK_THROWS_WITH_AS(box_model<double>(good, kSteel, 0), doctest::Contains("no face is clamped"), InvalidArgument);
  CHECK_THROWS_WITH_AS(box_model<double>(good, kSteel, 64), doctest::Contains("no Face"), InvalidArgument);
  CHECK_THROWS_WITH_AS(box_model<double>(BoxMesh{1, 1, 1, 1, 1, 1}, kSteel, Face::y_min | Face::y_max),
                       doctest::Contains("every node"), InvalidArgument);
  CHECK_THROWS_WITH_AS(box_model<float>(BoxMesh{1, 1, 1, 1000, 1000, 1000}, kSteel, Face::x_min),
                       doctest::Contains("more than 2^31 - 1"), InvalidArgument);
}

TEST_CASE("box text: parse_box and parse_material read good text and name what is wrong in bad text") {
  const BoxMesh box = parse_box("2x0.1x1e-1:40,2,3");
  CHECK(box.lx == 2);
  CHECK(box.ly == 0.1);
  CHECK(box.lz == 0.1);
  CHECK(box.nx == 40);
  CHECK(box.ny == 2);
  CHECK(box.nz == 3);
  const Material steel = parse_material("210e9,0.3,7850");
  CHECK(steel.young == 210e9);
  CHECK(steel.poisson == 0.3);
  CHECK(steel.density == 7850);
  const auto bad_box = [](const char* text, const char* problem) {
    CHECK_THROWS_WITH_AS(parse_box(text), doctest::Contains(problem), InvalidArgument);
  };
  bad_box("2x0.1x0.1", "no ':'");
  bad_box("2x0.1:40,2,2", "has 2 parts, not 3");
  bad_box("2x0.1x0.1:40,2", "has 2 parts, not 3");
  bad_box("2x0.1x0.1:40,2,2,1", "has 4 parts, not 3");
  bad_box("2xabcx0.1:40,2,2", "'abc' is not a valid number");
  bad_box("2x0.1x0.1:40,2.5,2", "'2.5' is not a valid number");
  bad_box("2x0.1x0.1:40,-2,2", "'-2' is not a valid number");
  bad_box("2x0.1x0.1:40,,2", "'' is not a valid number");
  bad_box("2x0.1x0.1:40,0,2", "at least one division");
  bad_box("0x0.1x0.1:40,2,2", "lx is 0");
  bad_box(" 2x0.1x0.1:40,2,2", "LxWxH:nx,ny,nz");
  const auto bad_material = [](const char* text, const char* problem) {
    CHECK_THROWS_WITH_AS(parse_material(text), doctest::Contains(problem), InvalidArgument);
  };
  bad_material("210e9,0.3", "has 2 parts, not 3");
  bad_material("210e9;0.3;7850", "has 1 part, not 3");
  bad_material("210e9,0.3x,7850", "'0.3x' is not a valid number");
  bad_material("210e9,0.5,7850", "(-1, 0.5)");
  bad_material("0,0.3,7850", "Young's modulus");
  bad_material("210e9,0.3,-1", "density");
}

TEST_CASE("Euler-Bernoulli frequencies: the clamped-free roots of 1 + cos x cosh x = 0 and the scaling") {
  // With L = E = I = rho = A = 1, f_j = x_j^2 / (2 pi).
  const double pi = std::acos(-1.0), two_pi = 2 * pi;
  const std::vector<double> f = euler_bernoulli_frequencies(1, 1, 1, 1, 1, 40);
  REQUIRE(f.size() == 40);
  const double roots[] = {1.87510407, 4.69409113, 7.85475744, 10.99554073, 14.13716839};
  for (std::size_t j = 0; j < 5; ++j) CHECK(std::sqrt(two_pi * f[j]) == doctest::Approx(roots[j]).epsilon(1e-9));
  for (std::size_t j = 0; j < 40; ++j) {
    const double x = std::sqrt(two_pi * f[j]);
    CHECK(std::abs(std::cos(x) + 1 / std::cosh(x)) <= 1e-13);
    CHECK(std::abs(x - (2 * j + 1) * pi / 2) < 0.31);  // near the asymptotic guess, so the j-th root
  }
  // A steel bar 2 x 0.1 x 0.1: f_1 = 1.8751^2 / (2 pi 4) sqrt(E h^2 / (12 rho)).
  const double h = 0.1, area = h * h, i_area = h * h * h * h / 12;
  const auto bar = euler_bernoulli_frequencies(2, 210e9, 7850, i_area, area, 2);
  CHECK(bar[0] == doctest::Approx(1.87510407 * 1.87510407 / (two_pi * 4) * std::sqrt(210e9 * h * h / (12 * 7850))));
  CHECK(euler_bernoulli_frequencies(1, 1, 1, 1, 1, 0).empty());
  CHECK_THROWS_WITH_AS(euler_bernoulli_frequencies(0, 1, 1, 1, 1, 3), doctest::Contains("beam length is 0"), InvalidArgument);
  CHECK_THROWS_WITH_AS(euler_bernoulli_frequencies(1, 1, 1, -1, 1, 3), doctest::Contains("i_area is -1"), InvalidArgument);
}
