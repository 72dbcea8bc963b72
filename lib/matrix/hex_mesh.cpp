#include "ziggurat/matrix/hex_mesh.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "base/parallel.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/host_memory.hpp"

namespace ziggurat::fem {

namespace {

constexpr std::size_t kNodes = 8;
constexpr std::size_t kLocal = 24;                        // 8 nodes x 3 DOFs
constexpr std::size_t kUpper = kLocal * (kLocal + 1) / 2;  // 300 stored values
constexpr std::size_t kGrain = 4096;                       // elements below which a thread is not worth starting
constexpr double kPi = 3.14159265358979323846;

// The brick's nodes as offsets in x, y, z, in the local order of the header.
constexpr int kCorner[kNodes][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                    {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};

using Matrix24 = std::array<double, kLocal * kLocal>;

std::string str(double value) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

void require_positive(double value, const char* name) {
  if (!(value > 0) || !std::isfinite(value)) {
    throw InvalidArgument(std::string(name) + " is " + str(value) + ": give a positive finite value");
  }
}

void check_sides(double hx, double hy, double hz) {
  require_positive(hx, "the brick side hx");
  require_positive(hy, "the brick side hy");
  require_positive(hz, "the brick side hz");
}

void check_material(const Material& material) {
  require_positive(material.young, "Young's modulus E (Material::young)");
  require_positive(material.density, "the density rho (Material::density)");
  // nu = 0.5 is incompressible: lambda, and so D, would be infinite.
  if (!(material.poisson > -1 && material.poisson < 0.5)) {
    throw InvalidArgument("Poisson's ratio nu (Material::poisson) is " + str(material.poisson) +
                          ": give a value in (-1, 0.5)");
  }
}

void check_box(const BoxMesh& box) {
  require_positive(box.lx, "the box length lx");
  require_positive(box.ly, "the box width ly");
  require_positive(box.lz, "the box height lz");
  if (box.nx == 0 || box.ny == 0 || box.nz == 0) {
    throw InvalidArgument("the box has " + std::to_string(box.nx) + " x " + std::to_string(box.ny) + " x " +
                          std::to_string(box.nz) + " bricks: give at least one division along each axis");
  }
}

// The 2-point Gauss rule is exact for polynomials of degree 3 along each axis: enough for both
// B^T D B (degree 2) and N^T N (degree 2) of a trilinear brick.
constexpr double kGauss = 0.57735026918962576451;  // 1 / sqrt(3), weight 1

// Calls point(xi, eta, zeta) at the 8 Gauss points of the reference cube [-1, 1]^3.
template <class Point>
void for_gauss_points(Point point) {
  for (const double zeta : {-kGauss, kGauss})
    for (const double eta : {-kGauss, kGauss})
      for (const double xi : {-kGauss, kGauss}) point(xi, eta, zeta);
}

double sign(int offset) { return offset == 0 ? -1.0 : 1.0; }

// N_a at a point of the reference cube.
std::array<double, kNodes> shape(double xi, double eta, double zeta) {
  std::array<double, kNodes> n{};
  for (std::size_t a = 0; a < kNodes; ++a) {
    n[a] = (1 + xi * sign(kCorner[a][0])) * (1 + eta * sign(kCorner[a][1])) * (1 + zeta * sign(kCorner[a][2])) / 8;
  }
  return n;
}

// The strain-displacement matrix B (6 x 24; strains xx, yy, zz, yz, xz, xy with engineering
// shears) at a point, for a brick of sides hx, hy, hz (dx/dxi = hx / 2).
std::array<double, 6 * kLocal> strain_matrix(double xi, double eta, double zeta, double hx, double hy, double hz) {
  std::array<double, 6 * kLocal> b{};
  for (std::size_t a = 0; a < kNodes; ++a) {
    const double sx = sign(kCorner[a][0]), sy = sign(kCorner[a][1]), sz = sign(kCorner[a][2]);
    const double gx = sx * (1 + eta * sy) * (1 + zeta * sz) / 8 * 2 / hx;
    const double gy = sy * (1 + xi * sx) * (1 + zeta * sz) / 8 * 2 / hy;
    const double gz = sz * (1 + xi * sx) * (1 + eta * sy) / 8 * 2 / hz;
    const std::size_t u = 3 * a, v = u + 1, w = u + 2;
    b[0 * kLocal + u] = gx;
    b[1 * kLocal + v] = gy;
    b[2 * kLocal + w] = gz;
    b[3 * kLocal + v] = gz;
    b[3 * kLocal + w] = gy;
    b[4 * kLocal + u] = gz;
    b[4 * kLocal + w] = gx;
    b[5 * kLocal + u] = gy;
    b[5 * kLocal + v] = gx;
  }
  return b;
}

// Isotropic linear elasticity: sigma = D eps in the order of strain_matrix().
std::array<double, 36> elasticity(const Material& material) {
  const double e = material.young, nu = material.poisson;
  const double lambda = e * nu / ((1 + nu) * (1 - 2 * nu));
  const double mu = e / (2 * (1 + nu));
  std::array<double, 36> d{};
  for (std::size_t r = 0; r < 3; ++r) {
    for (std::size_t c = 0; c < 3; ++c) d[r * 6 + c] = lambda;
    d[r * 6 + r] = lambda + 2 * mu;
    d[(r + 3) * 6 + r + 3] = mu;
  }
  return d;
}

// The upper triangle of a 24 x 24 matrix, packed row by row (ElementStorage::upper), rounded to T.
template <class T>
std::array<T, kUpper> packed_upper(const Matrix24& a) {
  std::array<T, kUpper> packed{};
  std::size_t p = 0;
  for (std::size_t r = 0; r < kLocal; ++r)
    for (std::size_t c = r; c < kLocal; ++c) packed[p++] = static_cast<T>(a[r * kLocal + c]);
  return packed;
}

// Face bits come in pairs, min then max, axis after axis: x_min = 1, x_max = 2, y_min = 4, ...
unsigned min_face(std::size_t axis) { return 1u << (2 * axis); }

// Whether node plane `at` of an axis of n divisions lies on a clamped face.
bool clamped_plane(unsigned clamped, std::size_t axis, std::size_t at, std::size_t n) {
  return ((clamped & min_face(axis)) && at == 0) || ((clamped & (min_face(axis) << 1)) && at == n);
}

// Each axis's count of free node planes: its nodes less its clamped end faces.
std::array<std::size_t, 3> free_planes(const BoxMesh& box, unsigned clamped) {
  const std::size_t n[3] = {box.nx, box.ny, box.nz};
  std::array<std::size_t, 3> planes{};
  for (std::size_t axis = 0; axis < 3; ++axis) {
    planes[axis] = n[axis] + 1 - (clamped_plane(clamped, axis, 0, n[axis]) ? 1 : 0) -
                   (clamped_plane(clamped, axis, n[axis], n[axis]) ? 1 : 0);
  }
  return planes;
}

// The free DOF count, checked before anything is allocated. Clamped faces are whole node planes,
// so the free nodes form a box of their own.
std::size_t checked_free_dofs(const BoxMesh& box, unsigned clamped) {
  constexpr unsigned all_faces = 63;
  if (clamped == 0) {
    throw InvalidArgument("no face is clamped: the stiffness would be singular (rigid-body motion); "
                          "clamp at least one face (e.g. Face::x_min)");
  }
  if ((clamped & ~all_faces) != 0) {
    throw InvalidArgument("clamped_faces " + std::to_string(clamped) + " has bits that are no Face: give an OR of "
                          "x_min, x_max, y_min, y_max, z_min, z_max");
  }
  const auto planes = free_planes(box, clamped);
  // In double, which cannot overflow here and is exact up to the limit compared with.
  const double dofs = 3.0 * double(planes[0]) * double(planes[1]) * double(planes[2]);
  if (dofs == 0) {
    throw InvalidArgument("every node of the box is clamped: give at least 2 divisions along an axis clamped at "
                          "both ends");
  }
  if (dofs > double(std::numeric_limits<std::int32_t>::max())) {
    throw InvalidArgument("the box has " + str(dofs) + " free DOFs, more than 2^31 - 1: give fewer divisions");
  }
  return static_cast<std::size_t>(dofs);
}

// node_dofs: 3 numbers per node, the free ones consecutive node after node, -1 where clamped.
std::vector<std::int32_t> number_dofs(const BoxMesh& box, unsigned clamped) {
  std::vector<std::int32_t> dofs(3 * box.nodes());
  std::int32_t next = 0;
  std::size_t node = 0;
  for (std::size_t l = 0; l <= box.nz; ++l) {
    for (std::size_t j = 0; j <= box.ny; ++j) {
      for (std::size_t i = 0; i <= box.nx; ++i, ++node) {
        const bool fixed = clamped_plane(clamped, 0, i, box.nx) || clamped_plane(clamped, 1, j, box.ny) ||
                           clamped_plane(clamped, 2, l, box.nz);
        for (std::size_t d = 0; d < 3; ++d) dofs[3 * node + d] = fixed ? -1 : next++;
      }
    }
  }
  return dofs;
}

// The 24 global DOFs of every element (element e = i + nx (j + ny l)), on every core.
std::vector<std::int32_t> element_indices(const BoxMesh& box, const std::vector<std::int32_t>& node_dofs) {
  std::vector<std::int32_t> indices(box.elements() * kLocal);
  const std::size_t px = box.nx + 1, pxy = px * (box.ny + 1);
  detail::parallel_for(box.elements(), kGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t e = begin; e < end; ++e) {
      const std::size_t i = e % box.nx, j = e / box.nx % box.ny, l = e / box.nx / box.ny;
      for (std::size_t a = 0; a < kNodes; ++a) {
        const std::size_t node = (i + kCorner[a][0]) + px * (j + kCorner[a][1]) + pxy * (l + kCorner[a][2]);
        for (std::size_t d = 0; d < 3; ++d) indices[e * kLocal + 3 * a + d] = node_dofs[3 * node + d];
      }
    }
  });
  return indices;
}

// The set of m copies of one element matrix, the copies made on every core.
template <class T>
ElementSet<T> replicated(const Matrix24& matrix, std::size_t dofs, std::vector<std::int32_t> indices) {
  const std::array<T, kUpper> packed = packed_upper<T>(matrix);
  ElementSet<T> set;
  set.dofs = dofs;
  set.element_size = kLocal;
  set.storage = ElementStorage::upper;
  set.indices = std::move(indices);
  set.matrices.resize(set.count() * kUpper);
  T* out = set.matrices.data();
  detail::parallel_for(set.count(), kGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t e = begin; e < end; ++e) std::copy(packed.begin(), packed.end(), out + e * kUpper);
  });
  return set;
}

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

// The whole token as a number (from_chars: no sign '+', no spaces); false otherwise.
template <class Number>
bool parse_whole(std::string_view token, Number& value) {
  const char* end = token.data() + token.size();
  const auto [stop, error] = std::from_chars(token.data(), end, value);
  return !token.empty() && error == std::errc() && stop == end;
}

// text cut at every separator: "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t stop = text.find(separator, start);
    parts.push_back(text.substr(start, stop - start));
    if (stop == std::string_view::npos) return parts;
    start = stop + 1;
  }
}

// Three numbers separated by `separator`; InvalidArgument naming `what` and `expected` otherwise.
template <class Number>
std::array<Number, 3> parse_three(std::string_view text, char separator, const std::string& what,
                                  const std::string& expected) {
  const auto parts = split(text, separator);
  if (parts.size() != 3) {
    throw InvalidArgument(what + " " + quoted(text) + " has " + std::to_string(parts.size()) +
                          (parts.size() == 1 ? " part" : " parts") + ", not 3: expected " + expected);
  }
  std::array<Number, 3> values{};
  for (std::size_t p = 0; p < 3; ++p) {
    if (!parse_whole(parts[p], values[p])) {
      throw InvalidArgument(what + " " + quoted(text) + ": " + quoted(parts[p]) + " is not a valid number; expected " +
                            expected);
    }
  }
  return values;
}

// The root of 1 + cos(x) cosh(x) = 0 in [(j - 1) pi, j pi], where cos(x) + 1 / cosh(x) (the same
// roots, without the overflow of cosh) changes sign, by bisection to the last bit.
double clamped_free_root(std::size_t j) {
  const auto g = [](double x) { return std::cos(x) + 1 / std::cosh(x); };
  double low = double(j - 1) * kPi, high = double(j) * kPi;
  const bool falling = g(low) > 0;
  for (;;) {
    const double middle = low + (high - low) / 2;
    if (middle <= low || middle >= high) return middle;
    ((g(middle) > 0) == falling ? low : high) = middle;
  }
}

}  // namespace

std::array<double, 576> brick_stiffness(double hx, double hy, double hz, const Material& material) {
  check_sides(hx, hy, hz);
  check_material(material);
  const std::array<double, 36> d = elasticity(material);
  const double weight = hx * hy * hz / 8;  // det J, times the Gauss weight 1
  Matrix24 k{};
  for_gauss_points([&](double xi, double eta, double zeta) {
    const auto b = strain_matrix(xi, eta, zeta, hx, hy, hz);
    std::array<double, 6 * kLocal> db{};  // D B
    for (std::size_t r = 0; r < 6; ++r)
      for (std::size_t s = 0; s < 6; ++s)
        for (std::size_t c = 0; c < kLocal; ++c) db[r * kLocal + c] += d[r * 6 + s] * b[s * kLocal + c];
    for (std::size_t r = 0; r < kLocal; ++r)
      for (std::size_t c = r; c < kLocal; ++c)
        for (std::size_t s = 0; s < 6; ++s) k[r * kLocal + c] += weight * b[s * kLocal + r] * db[s * kLocal + c];
  });
  // The lower triangle mirrored: symmetric to the last bit, as the upper storage assumes.
  for (std::size_t r = 0; r < kLocal; ++r)
    for (std::size_t c = 0; c < r; ++c) k[r * kLocal + c] = k[c * kLocal + r];
  return k;
}

std::array<double, 576> brick_mass(double hx, double hy, double hz, double density, MassKind kind) {
  check_sides(hx, hy, hz);
  require_positive(density, "the density rho");
  const double weight = density * hx * hy * hz / 8;
  Matrix24 m{};
  for_gauss_points([&](double xi, double eta, double zeta) {
    const auto n = shape(xi, eta, zeta);  // n[a] * n[b] first: symmetric to the last bit
    for (std::size_t a = 0; a < kNodes; ++a)
      for (std::size_t b = 0; b < kNodes; ++b)
        for (std::size_t d = 0; d < 3; ++d) m[(3 * a + d) * kLocal + 3 * b + d] += weight * (n[a] * n[b]);
  });
  if (kind == MassKind::consistent) return m;
  Matrix24 lumped{};
  for (std::size_t r = 0; r < kLocal; ++r)
    for (std::size_t c = 0; c < kLocal; ++c) lumped[r * kLocal + r] += m[r * kLocal + c];
  return lumped;
}

template <class T>
ElasticModel<T> box_model(const BoxMesh& box, const Material& material, unsigned clamped_faces, MassKind mass) {
  check_box(box);
  check_material(material);
  const std::size_t dofs = checked_free_dofs(box, clamped_faces);
  // K's and M's element matrices (at least their upper triangles) and the DOF indices.
  check_host_memory(std::uint64_t(box.elements()) * (2 * 300 * sizeof(T) + 24 * sizeof(std::int32_t)),
                    "a model of " + std::to_string(box.nx) + " x " + std::to_string(box.ny) + " x " +
                        std::to_string(box.nz) + " bricks", "take fewer divisions");
  const double hx = box.lx / double(box.nx), hy = box.ly / double(box.ny), hz = box.lz / double(box.nz);
  ElasticModel<T> model;
  model.box = box;
  model.material = material;
  model.clamped = clamped_faces;
  model.node_dofs = number_dofs(box, clamped_faces);
  std::vector<std::int32_t> indices = element_indices(box, model.node_dofs);
  model.stiffness = replicated<T>(brick_stiffness(hx, hy, hz, material), dofs, indices);
  model.mass = replicated<T>(brick_mass(hx, hy, hz, material.density, mass), dofs, std::move(indices));
  return model;
}

template <class T>
ElasticModel<T> cantilever(const BoxMesh& box, const Material& material, MassKind mass) {
  return box_model<T>(box, material, Face::x_min, mass);
}

BoxMesh parse_box(std::string_view text) {
  const std::string expected = "LxWxH:nx,ny,nz (lengths in metres, divisions as whole numbers, e.g. 2x0.1x0.1:40,2,2)";
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    throw InvalidArgument("box " + quoted(text) + " has no ':' between lengths and divisions: expected " + expected);
  }
  const auto lengths = parse_three<double>(text.substr(0, colon), 'x', "box lengths", expected);
  const auto divisions = parse_three<std::size_t>(text.substr(colon + 1), ',', "box divisions", expected);
  const BoxMesh box{lengths[0], lengths[1], lengths[2], divisions[0], divisions[1], divisions[2]};
  check_box(box);
  return box;
}

Material parse_material(std::string_view text) {
  const std::string expected = "E,nu,rho (Pa, Poisson's ratio, kg/m^3; e.g. 210e9,0.3,7850)";
  const auto values = parse_three<double>(text, ',', "material", expected);
  const Material material{values[0], values[1], values[2]};
  check_material(material);
  return material;
}

std::vector<double> euler_bernoulli_frequencies(double length, double young, double density, double i_area,
                                                double area, std::size_t n) {
  require_positive(length, "the beam length");
  require_positive(young, "Young's modulus E");
  require_positive(density, "the density rho");
  require_positive(i_area, "the second moment of area i_area");
  require_positive(area, "the section area");
  const double scale = std::sqrt(young * i_area / (density * area)) / (2 * kPi * length * length);
  std::vector<double> frequencies(n);
  for (std::size_t j = 0; j < n; ++j) {
    const double root = clamped_free_root(j + 1);
    frequencies[j] = root * root * scale;
  }
  return frequencies;
}

template ElasticModel<float> box_model<float>(const BoxMesh&, const Material&, unsigned, MassKind);
template ElasticModel<double> box_model<double>(const BoxMesh&, const Material&, unsigned, MassKind);
template ElasticModel<float> cantilever<float>(const BoxMesh&, const Material&, MassKind);
template ElasticModel<double> cantilever<double>(const BoxMesh&, const Material&, MassKind);

}  // namespace ziggurat::fem
