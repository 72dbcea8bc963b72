// Element-by-element operators on every device against the host (matrix/elements.hpp): Y = K X and
// X^T K X against the assembled CSR product, both scatters, both projection layouts and resident
// and streamed (the same bits),
// operators sharing elements, and CG matrix-free on the operator against CG on the assembled K. (The
// subspace iteration that uses them: test_subspace_iteration.cpp.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../support/devices.hpp"
#include "../support/elements.hpp"
#include "../support/util.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/hex_mesh.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/base/program.hpp"
#include "ziggurat/ops/block_products.hpp"
#include "ziggurat/ops/ebe.hpp"
#include "ziggurat/solver/krylov.hpp"
#include "ziggurat/tuning/ebe_autotune.hpp"
#include "ziggurat/tuning/profile_store.hpp"

using namespace ziggurat;
using namespace ziggurat::fem;
using test::assembled_in_double;
using test::assembled_projection;
using test::random_elements;
using test::random_vectors;

namespace {

template <class T>
double tolerance() {
  return std::is_same_v<T, double> ? 1e-12 : 2e-5;
}

double largest(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

template <class T>
std::vector<double> as_double(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

template <class T>
void check_close(const std::vector<double>& got, const std::vector<double>& want, double relative) {
  REQUIRE(got.size() == want.size());
  const double scale = std::max(largest(want), 1e-300);
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]) / scale);
  CHECK(worst <= relative);
}

template <class T>
std::vector<T> device_multiply(Context& context, EbeOperator<T>& op, const std::vector<T>& x) {
  sparse::DeviceVectors<T> dx(context, op.dofs(), op.k()), dy(context, op.dofs(), op.k());
  dx.upload(x);
  op.multiply(dx, dy);
  return dy.download();
}

template <class T>
std::vector<double> device_project(Context& context, EbeOperator<T>& op, const std::vector<T>& x) {
  sparse::DeviceVectors<T> dx(context, op.dofs(), op.k());
  dx.upload(x);
  return op.project(dx);
}


template <class T>
void check_operator(Context& context, const ElementSet<T>& set, std::size_t k, EbeScatter scatter) {
  EbeOperator<T> op(context, set, k, {scatter, 0});
  const std::vector<T> x = random_vectors<T>(set.dofs, k, 11);
  const std::vector<T> want = sparse::multiply(assemble_csr(set), x, k);
  check_close<T>(as_double(device_multiply(context, op, x)), as_double(want), tolerance<T>());
  check_close<T>(device_project(context, op, x), assembled_projection(set, x, k), 10 * tolerance<T>());
}

template <class T>
void check_operators(Context& context) {
  // Each (l, k) is a program of its own: a few pairs cover odd sizes, pads, more vectors than the
  // product tiles have work-items (2, 37) and a brick with the paper's 27 vectors without a long
  // cold build on CPU devices.
  for (const auto& [l, k] : {std::pair<std::size_t, std::size_t>{1, 1}, {4, 3}, {2, 37}, {24, 8}, {24, 27}}) {
    {
      for (const ElementStorage storage : {ElementStorage::full, ElementStorage::upper}) {
        CAPTURE(l);
        CAPTURE(k);
        const ElementSet<T> set = random_elements<T>(300, l, storage, l * 100 + k);
        check_operator(context, set, k, EbeScatter::colouring);
        try {
          check_operator(context, set, k, EbeScatter::atomics);
        } catch (const UnsupportedFeature& e) {
          MESSAGE("atomics skipped: " << e.what());
        }
      }
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE("EBE Y = K X and X^T K X match the assembled product", T, float, double) {
  test::for_each_device([](Context& context) { check_operators<T>(context); }, test::needs_for<T>());
}

TEST_CASE_TEMPLATE("EBE on a brick mesh with clamped DOFs matches the assembled product", T, float, double) {
  test::for_each_device(
      [](Context& context) {
        const ElasticModel<T> model = cantilever<T>({1, 0.2, 0.3, 6, 2, 3}, Material{});
        for (const std::size_t k : {2, 13}) {
          check_operator(context, model.stiffness, k, EbeScatter::colouring);
          check_operator(context, model.mass, k, EbeScatter::colouring);
        }
      },
      test::needs_for<T>());
}

TEST_CASE_TEMPLATE("EBE: streamed in any batch size gives the resident bits", T, float, double) {
  test::for_each_device(
      [](Context& context) {
        const ElementSet<T> set = random_elements<T>(1000, 24, ElementStorage::upper, 5);
        const std::size_t k = 5;
        const std::vector<T> x = random_vectors<T>(set.dofs, k, 3);
        EbeOperator<T> resident(context, set, k);
        REQUIRE(resident.resident());
        const std::vector<double> p = device_project(context, resident, x);
        const std::vector<T> y = device_multiply(context, resident, x);
        CHECK(device_project(context, resident, x) == p);  // the same bits twice
        for (const std::size_t batch : {1, 32, 64, 500, 980}) {
          CAPTURE(batch);
          EbeOperator<T> streamed(context, set, k, {EbeScatter::colouring, batch});
          CHECK_FALSE(streamed.resident());
          CHECK(device_project(context, streamed, x) == p);
          CHECK(device_multiply(context, streamed, x) == y);
        }
      },
      test::needs_for<T>());
}

TEST_CASE_TEMPLATE("EBE: an operator on another's elements gives the bits of its own", T, float, double) {
  test::for_each_device(
      [](Context& context) {
        const ElementSet<T> set = random_elements<T>(500, 24, ElementStorage::upper, 9);
        const std::vector<T> x = random_vectors<T>(set.dofs, 3, 4);
        EbeOperator<T> alone(context, set, 3);
        const std::vector<T> y = device_multiply(context, alone, x);
        const std::vector<double> p = device_project(context, alone, x);
        for (const std::size_t batch : {0, 64}) {
          CAPTURE(batch);
          // The operator it shares with is gone first: the elements stay while either holds them.
          EbeOperator<T> narrow = [&] {
            EbeOperator<T> wide(context, set, 8, {EbeScatter::colouring, batch});
            return EbeOperator<T>(wide, 3);
          }();
          CHECK(narrow.k() == 3);
          CHECK(narrow.resident() == (batch == 0));
          CHECK(device_multiply(context, narrow, x) == y);
          CHECK(device_project(context, narrow, x) == p);
        }
        CHECK_THROWS_AS(EbeOperator<T>(alone, 65), InvalidArgument);
      },
      test::needs_for<T>());
}

TEST_CASE_TEMPLATE("CG matrix-free on the element operator solves what CG on the assembled K solves", T, float,
                   double) {
  test::for_each_device(
      [](Context& context) {
        const ElasticModel<T> model = cantilever<T>({1, 0.2, 0.2, 8, 2, 2}, Material{});
        const ElementSet<T>& stiffness = model.stiffness;
        const std::size_t k = 3, n = stiffness.dofs;
        const std::vector<T> b = random_vectors<T>(n, k, 5);
        sparse::SolverOptions options;
        options.method = sparse::KrylovMethod::cg;
        // Float reaches about 1e-5 on this stiff system (eps_f times its condition), so it is asked for 1e-4.
        options.tolerance = std::is_same_v<T, double> ? 1e-10 : 1e-4;
        options.max_iterations = 5000;
        const sparse::Bsr<T> assembled = assemble_bsr(stiffness, 3);
        const sparse::Bsr<T> blocks = assemble_block_diagonal(stiffness, 3);
        const auto op = std::make_shared<EbeOperator<T>>(context, stiffness, k);
        for (const auto kind : {sparse::PreconditionerKind::block_jacobi, sparse::PreconditionerKind::jacobi}) {
          const std::string name = sparse::to_string(kind);
          CAPTURE(name);
          options.preconditioner = kind;
          std::vector<T> xa, xm;
          const sparse::SolveReport ra = sparse::KrylovSolver<T>(context, assembled, k, options).solve(b, xa);
          sparse::KrylovSolver<T> free(context, op, blocks, options);
          const sparse::SolveReport rm = free.solve(b, xm);
          CHECK(ra.converged);
          CHECK(rm.converged);
          CHECK(rm.product_kernel == "matrix-free");
          // The residual of the matrix-free solution with the assembled K, on the host in double.
          const std::vector<double> kx = sparse::multiply(assembled_in_double(stiffness), as_double(xm), k);
          for (std::size_t j = 0; j < k; ++j) {
            double r2 = 0, b2 = 0;
            for (std::size_t i = 0; i < n; ++i) {
              r2 += (double(b[i * k + j]) - kx[i * k + j]) * (double(b[i * k + j]) - kx[i * k + j]);
              b2 += double(b[i * k + j]) * double(b[i * k + j]);
            }
            CHECK(std::sqrt(r2 / b2) <= (std::is_same_v<T, double> ? 1e-9 : 1e-3));
          }
          // Rounding differs (element sums against row sums), the iteration hardly.
          if (std::is_same_v<T, double>) CHECK(std::abs(double(rm.iterations) - double(ra.iterations)) <= 2 + ra.iterations / 20);
        }
        options.preconditioner = sparse::PreconditionerKind::ilu0;
        CHECK_THROWS_WITH_AS(sparse::KrylovSolver<T>(context, op, blocks, options), doctest::Contains("assembled"),
                             InvalidArgument);
        options.preconditioner = sparse::PreconditionerKind::jacobi;
        CHECK_THROWS_WITH_AS(sparse::KrylovSolver<T>(context, op, assemble_block_diagonal(random_elements<T>(5, 3, ElementStorage::upper, 1), 3), options),
                             doctest::Contains("rows"), InvalidArgument);
      },
      test::needs_for<T>());
}

TEST_CASE("CG asked for more than float attains stops as stagnated, long before its limit") {
  test::for_each_device([](Context& context) {
    const ElasticModel<float> model = cantilever<float>({1, 0.2, 0.2, 8, 2, 2}, Material{});
    const std::size_t k = 3, n = model.stiffness.dofs;
    const std::vector<float> b = random_vectors<float>(n, k, 5);
    const sparse::Bsr<float> assembled = assemble_bsr(model.stiffness, 3);
    sparse::SolverOptions options;
    options.method = sparse::KrylovMethod::cg;
    options.tolerance = 1e-9;  // float reaches about 1e-5 here (see above)
    options.max_iterations = 20000;
    for (const auto kind : {sparse::PreconditionerKind::ilu0, sparse::PreconditionerKind::jacobi,
                            sparse::PreconditionerKind::none}) {
      const std::string name = sparse::to_string(kind);
      CAPTURE(name);
      options.preconditioner = kind;
      std::vector<float> x;
      const sparse::SolveReport report = sparse::KrylovSolver<float>(context, assembled, k, options).solve(b, x);
      CHECK(report.status == sparse::SolveStatus::stagnation);
      CHECK(report.reason.find("stagnated") != std::string::npos);
      // It got as far as float gets, and stopped within a few times the iterations that took.
      CHECK(report.relative_residual < 1e-3);
      CHECK(report.iterations < 2000);
    }
  });
}

// In double only: float runs the column layout in the layout choice below.
TEST_CASE("EBE: the tile and column layouts give the same bits") {
  using T = double;
  test::for_each_device(
      [](Context& context) {
        // 3 vectors on 4-DOF elements, more vectors than a warp (a two-warp column group, pads), and
        // the paper's 27 vectors (on 6-DOF elements: a short build on CPU devices; the Oclgrind
        // subset below and the CLI's modes test run 24-DOF bricks).
        for (const auto& [l, k] : {std::pair<std::size_t, std::size_t>{4, 3}, {2, 37}, {6, 27}}) {
          CAPTURE(l);
          CAPTURE(k);
          const ElementSet<T> set = random_elements<T>(300, l, ElementStorage::upper, l * 7 + k);
          const std::vector<T> x = random_vectors<T>(set.dofs, k, 5);
          EbeOperator<T> tiles(context, set, k, {EbeScatter::colouring, 0, EbeLayout::tiles});
          EbeOperator<T> columns(context, set, k, {EbeScatter::colouring, 0, EbeLayout::columns});
          CHECK(columns.options().projection == EbeLayout::columns);
          const std::vector<double> p = device_project(context, columns, x);
          check_close<T>(p, assembled_projection(set, x, k), 10 * tolerance<T>());
          CHECK(device_project(context, tiles, x) == p);
          EbeOperator<T> streamed(context, set, k, {EbeScatter::colouring, 64, EbeLayout::columns});
          CHECK(device_project(context, streamed, x) == p);
        }
        const ElementSet<T> large = random_elements<T>(10, kEbeColumnDofs + 1, ElementStorage::upper, 4);
        CHECK_THROWS_WITH_AS(EbeOperator<T>(context, large, 27, {EbeScatter::colouring, 0, EbeLayout::columns}),
                             doctest::Contains("at most 32 DOFs"), UnsupportedFeature);
      },
      test::needs_for<double>());
}

// Elements stay resident while every set of them, with the tensor layout's factors, fits in half the
// device's memory; beyond, they stream in whole chunks.
TEST_CASE("EBE: the default batch size streams the elements only where they do not fit") {
  test::for_each_device([](Context& context) {
    const ElementSet<double> set = random_elements<double>(300, 24, ElementStorage::upper, 3);
    CHECK(default_batch_elements(context, set) == 0);
    CHECK(default_batch_elements(context, set, EbeLayout::tensor, 2) == 0);
    // A set in the tensor layout: 300 elements of two matrices and two index vectors, and an order entry.
    const std::size_t half = context.device().global_mem_bytes / 2, tensor_set = 300 * (2 * (300 * 8 + 24 * 4) + 4);
    const std::size_t sets = half / tensor_set + 1;  // the tensor layout's factors no longer fit; L alone does
    CHECK(default_batch_elements(context, set, EbeLayout::tiles, sets) == 0);
    const std::size_t batch = default_batch_elements(context, set, EbeLayout::tensor, sets);
    CHECK(batch >= kEbeChunk);
    CHECK(batch % kEbeChunk == 0);
  });
}

// Where ebe_factor.cl keeps R[i][j] (i <= j) of an element of `tiles` 8-row tiles: the blocks above
// the diagonal by rows, then the diagonal blocks' packed upper triangles (written out again here).
std::size_t factored_position(std::size_t tiles, std::size_t i, std::size_t j) {
  const std::size_t a = i / 8, b = j / 8, r = i % 8, c = j % 8;
  if (a < b) return 64 * (a * (2 * tiles - a - 1) / 2 + b - a - 1) + 8 * r + c;
  return 32 * tiles * (tiles - 1) + 36 * a + r * (15 - r) / 2 + c;
}

// Runs ebe_cholesky on packed elements of l DOFs: their factors and permuted DOF numbers into
// `factors` and `numbers`; returns the flag (1: an element is indefinite).
int factor_on_device(Context& context, std::size_t l, const std::vector<double>& matrices,
                     const std::vector<cl_int>& indices, std::vector<double>& factors, std::vector<cl_int>& numbers) {
  const std::size_t count = indices.size() / l;
  DeviceBuffer<double> m(context, matrices.size()), r(context, matrices.size(), "factors", CL_MEM_READ_WRITE);
  DeviceBuffer<cl_int> v(context, indices.size()), p(context, indices.size(), "numbers", CL_MEM_READ_WRITE);
  DeviceBuffer<cl_int> failed(context, 1, "flag", CL_MEM_READ_WRITE);
  const cl_int zero = 0;
  copy_to_device(context.compute_queue(), matrices.data(), m);
  copy_to_device(context.compute_queue(), indices.data(), v);
  copy_to_device(context.compute_queue(), &zero, failed);
  cl::Kernel factor = context.kernel(
      context.program("ebe_factor", BuildOptions().real_type<double>().define("L", l).define("PACKED", l * (l + 1) / 2).str()),
      "ebe_cholesky");
  check(factor.setArg(0, static_cast<cl_uint>(count)), "clSetKernelArg");
  check(factor.setArg(1, m.get()), "clSetKernelArg");
  check(factor.setArg(2, v.get()), "clSetKernelArg");
  check(factor.setArg(3, r.get()), "clSetKernelArg");
  check(factor.setArg(4, p.get()), "clSetKernelArg");
  check(factor.setArg(5, failed.get()), "clSetKernelArg");
  check(context.compute_queue().enqueueNDRangeKernel(factor, cl::NullRange, cl::NDRange(count + 5)),
        "clEnqueueNDRangeKernel");
  cl_int flag = -1;
  factors.resize(matrices.size());
  numbers.resize(indices.size());
  copy_to_host(context.compute_queue(), r, factors.data());
  copy_to_host(context.compute_queue(), p, numbers.data());
  copy_to_host(context.compute_queue(), failed, &flag);
  return flag;
}

// The tensor layout's factoring (ebe_factor.cl) runs on every device: checked here on its own.
TEST_CASE("EBE: factoring an element gives P L P^T = R^T R, its DOFs permuted alike, and finds indefinite ones" *
          doctest::test_suite("oclgrind")) {
  test::for_each_device(
      [](Context& context) {
        const std::size_t l = 24, packed = 300;
        // Free bricks of a cantilever (rank 18: six rigid-body motions) and positive definite
        // random elements.
        const ElasticModel<double> model = cantilever<double>({1, 0.4, 0.2, 3, 2, 2}, Material{});
        REQUIRE(model.stiffness.storage == ElementStorage::upper);
        const ElementSet<double> definite = random_elements<double>(4, l, ElementStorage::upper, 5);
        std::vector<double> given(model.stiffness.matrices.begin(), model.stiffness.matrices.begin() + 4 * packed);
        given.insert(given.end(), definite.matrices.begin(), definite.matrices.end());
        const std::size_t count = given.size() / packed;
        std::vector<cl_int> indices(count * l);
        for (std::size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<cl_int>(100 * (i / l) + i % l);
        std::vector<double> factors;
        std::vector<cl_int> numbers;
        CHECK(factor_on_device(context, l, given, indices, factors, numbers) == 0);
        for (std::size_t e = 0; e < count; ++e) {
          CAPTURE(e);
          const auto entry = [&](std::size_t i, std::size_t j) {  // L_e[i][j], packed upper rows
            const std::size_t lo = std::min(i, j), hi = std::max(i, j);
            return given[e * packed + lo * (2 * l - 1 - lo) / 2 + hi];
          };
          const auto r = [&](std::size_t i, std::size_t j) { return i > j ? 0.0 : factors[e * packed + factored_position(3, i, j)]; };
          std::vector<std::size_t> perm(l);
          std::vector<bool> seen(l, false);
          for (std::size_t i = 0; i < l; ++i) {
            const cl_int d = numbers[e * l + i] - static_cast<cl_int>(100 * e);
            REQUIRE((d >= 0 && d < static_cast<cl_int>(l) && !seen[d]));
            perm[i] = static_cast<std::size_t>(d);
            seen[d] = true;
          }
          double scale = 0, worst = 0;
          std::size_t rank = 0;
          for (std::size_t i = 0; i < l; ++i) {
            scale = std::max(scale, entry(i, i));
            if (r(i, i) != 0) rank = i + 1;
            if (i > 0) CHECK(r(i, i) <= r(i - 1, i - 1));  // the largest pivot first
          }
          for (std::size_t i = rank; i < l; ++i)
            for (std::size_t j = i; j < l; ++j) CHECK(r(i, j) == 0);
          for (std::size_t i = 0; i < l; ++i)
            for (std::size_t j = i; j < l; ++j) {
              double v = 0;
              for (std::size_t k = 0; k <= i; ++k) v += r(k, i) * r(k, j);
              worst = std::max(worst, std::abs(v - entry(perm[i], perm[j])));
            }
          CHECK(worst <= 1e-13 * scale);
          CHECK(rank == (e < 4 ? 18 : l));
        }
        // An indefinite element among definite ones: flagged.
        ElementSet<double> mixed = random_elements<double>(3, l, ElementStorage::upper, 9);
        mixed.matrices[packed + 5 * (2 * l - 1 - 5) / 2 + 5] = -1;  // element 1's entry (5, 5)
        CHECK(factor_on_device(context, l, mixed.matrices, std::vector<cl_int>(indices.begin(), indices.begin() + 3 * l),
                               factors, numbers) == 1);
      },
      test::needs_for<double>());
}

// The tensor layout runs only on NVIDIA's tensor cores: elsewhere it must refuse, naming why.
TEST_CASE("EBE: the tensor layout projects as the others do, with the same bits for every batch size") {
  using T = double;
  test::for_each_device(
      [](Context& context) {
        const ElementSet<T> bricks = random_elements<T>(300, 24, ElementStorage::upper, 41);
        const std::string refusal = ebe_tensor_refusal(context.device(), sizeof(T), 24, 27);
        if (!refusal.empty()) {
          MESSAGE("tensor layout refused: " << refusal);
          CHECK(context.device().nvidia_compute_capability < 80);
          CHECK_THROWS_WITH_AS(EbeOperator<T>(context, bricks, 27, {EbeScatter::colouring, 0, EbeLayout::tensor}),
                               doctest::Contains("compute capability 8.0"), UnsupportedFeature);
          return;
        }
        // The paper's 27 vectors of 24-DOF bricks; 3 vectors of 4-DOF elements (pad rows and
        // vectors); 10-DOF elements with 9 vectors (two tiles each way, both padded); 16-DOF
        // elements with 20 vectors (three vector tiles); the limits. 24, 16 and 32 DOFs are stored
        // in the tensor cores' order, 4 and 10 as packed rows.
        for (const auto& [l, k] :
             {std::pair<std::size_t, std::size_t>{24, 27}, {4, 3}, {10, 9}, {16, 20}, {32, 32}}) {
          CAPTURE(l);
          CAPTURE(k);
          const ElementSet<T> set = random_elements<T>(300, l, ElementStorage::upper, l * 5 + k);
          const std::vector<T> x = random_vectors<T>(set.dofs, k, 6);
          EbeOperator<T> tensor(context, set, k, {EbeScatter::colouring, 0, EbeLayout::tensor});
          CHECK(tensor.factored() == (l % 8 == 0));  // these elements are positive definite
          const std::vector<double> p = device_project(context, tensor, x);
          check_close<T>(p, assembled_projection(set, x, k), 10 * tolerance<T>());
          CHECK(device_project(context, tensor, x) == p);
          // Y = K X reads the tensor layout's storage order through its table: the same bits.
          EbeOperator<T> tiles(context, set, k, {EbeScatter::colouring, 0, EbeLayout::tiles});
          const std::vector<T> y = device_multiply(context, tiles, x);
          CHECK(device_multiply(context, tensor, x) == y);
          for (const std::size_t batch : {std::size_t{32}, std::size_t{96}}) {
            EbeOperator<T> streamed(context, set, k, {EbeScatter::colouring, batch, EbeLayout::tensor});
            CHECK(streamed.factored() == tensor.factored());
            CHECK(device_project(context, streamed, x) == p);
            CHECK(device_multiply(context, streamed, x) == y);
            CHECK(device_project(context, streamed, x) == p);  // after Y = K X's batches
          }
        }
        // One indefinite element of 24 DOFs: no factoring, resident or streamed.
        ElementSet<T> indefinite = random_elements<T>(300, 24, ElementStorage::upper, 17);
        indefinite.matrices[200 * 300] = -30;  // element 200's first diagonal entry
        const std::vector<T> xi = random_vectors<T>(indefinite.dofs, 27, 8);
        EbeOperator<T> unfactored(context, indefinite, 27, {EbeScatter::colouring, 0, EbeLayout::tensor});
        CHECK_FALSE(unfactored.factored());
        const std::vector<double> pi = device_project(context, unfactored, xi);
        check_close<T>(pi, assembled_projection(indefinite, xi, 27), 10 * tolerance<T>());
        EbeOperator<T> tiles(context, indefinite, 27, {EbeScatter::colouring, 0, EbeLayout::tiles});
        CHECK(device_multiply(context, unfactored, xi) == device_multiply(context, tiles, xi));
        EbeOperator<T> streamed(context, indefinite, 27, {EbeScatter::colouring, 64, EbeLayout::tensor});
        CHECK_FALSE(streamed.factored());
        CHECK(device_project(context, streamed, xi) == pi);
        const ElasticModel<T> model = cantilever<T>({1, 0.4, 0.2, 5, 4, 2}, Material{});  // clamped DOFs
        const std::vector<T> x = random_vectors<T>(model.stiffness.dofs, 27, 7);
        EbeOperator<T> tensor(context, model.stiffness, 27, {EbeScatter::colouring, 0, EbeLayout::tensor});
        CHECK(tensor.factored());  // free bricks are singular: factored to their rank
        check_close<T>(device_project(context, tensor, x), assembled_projection(model.stiffness, x, 27),
                       10 * tolerance<T>());
        EbeOperator<T> mass(context, model.mass, 27, {EbeScatter::colouring, 0, EbeLayout::tensor});
        CHECK(mass.factored());
        check_close<T>(device_project(context, mass, x), assembled_projection(model.mass, x, 27), 10 * tolerance<T>());
        const ElementSet<float> floats = random_elements<float>(20, 24, ElementStorage::upper, 3);
        CHECK_THROWS_WITH_AS(EbeOperator<float>(context, floats, 27, {EbeScatter::colouring, 0, EbeLayout::tensor}),
                             doctest::Contains("double only"), UnsupportedFeature);
        CHECK_THROWS_WITH_AS(EbeOperator<T>(context, bricks, 33, {EbeScatter::colouring, 0, EbeLayout::tensor}),
                             doctest::Contains("at most 32"), UnsupportedFeature);
      },
      test::needs_for<double>());
}

TEST_CASE("EBE: the projection layout is measured once per kind of problem, kept as a record, then read") {
  test::for_each_device([](Context& context) {
    test::TempDir dir;
    test::EnvGuard cache("ZIGGURAT_CACHE_DIR", dir.path().c_str()), on("ZIGGURAT_CACHE", nullptr);
    // 6-DOF elements with 27 vectors: columns issue fewer multiply-adds (33 warp-steps, tiles 36).
    const ElementSet<float> bricks = random_elements<float>(200, 6, ElementStorage::upper, 8);
    const std::size_t group = context.device().max_work_group_size;
    CHECK(ebe_projection_steps(EbeLayout::columns, 6, 27, group) == 33);
    CHECK(ebe_projection_steps(EbeLayout::tiles, 6, 27, group) == 36);
    const EbeLayoutChoice first = choose_ebe_layout(context, bricks, 27);
    CHECK(first.measured_now);
    CHECK(first.key == "ebe projection f32 l6 k27");
    REQUIRE(first.seconds.size() == 2);
    CHECK(first.seconds[0].second <= first.seconds[1].second);
    CHECK(first.seconds.front().first == to_string(first.layout));
    const EbeLayoutChoice again = choose_ebe_layout(context, bricks, 27);
    CHECK_FALSE(again.measured_now);
    CHECK(again.layout == first.layout);
    // Where columns issue more (3 vectors) or cannot run (elements too large), tiles alone.
    CHECK(ebe_projection_steps(EbeLayout::columns, 24, 3, group) > ebe_projection_steps(EbeLayout::tiles, 24, 3, group));
    CHECK(ebe_projection_steps(EbeLayout::columns, kEbeColumnDofs + 1, 27, group) == SIZE_MAX);
    CHECK(ebe_projection_steps(EbeLayout::tiles, 24, 27, group) == 240);
    CHECK(ebe_projection_steps(EbeLayout::columns, 24, 27, group) == 240);
    // Tensor: 6 blocks of 16 x 8 x 8 for the factored product (R's upper triangle of 3 x 3 blocks) of
    // each vector pair, 5 a row step for the projection, 8 steps each.
    CHECK(ebe_projection_steps(EbeLayout::tensor, 24, 27, group) == 216);
    CHECK(ebe_projection_steps(EbeLayout::tensor, 20, 27, group) == 264);  // unfactored: 18 blocks
    CHECK(ebe_projection_steps(EbeLayout::tensor, kEbeTensorLimit + 1, 27, group) == SIZE_MAX);
    for (const std::size_t l : {std::size_t{6}, kEbeColumnDofs + 1}) {
      const ElementSet<float> set = random_elements<float>(40, l, ElementStorage::upper, 9);
      const EbeLayoutChoice tiles = choose_ebe_layout(context, set, l == 6 ? 3 : 27);
      REQUIRE(tiles.seconds.size() == 1);
      CHECK(tiles.layout == EbeLayout::tiles);
    }
  });
}

// A record written before the tensor layout existed names tiles and columns only: where the tensor
// layout runs, it is measured again, with tensor among the candidates; elsewhere it is read.
TEST_CASE("EBE: a projection record without the tensor layout is measured again where tensor runs") {
  test::for_each_device(
      [](Context& context) {
        test::TempDir dir;
        test::EnvGuard cache("ZIGGURAT_CACHE_DIR", dir.path().c_str()), on("ZIGGURAT_CACHE", nullptr);
        const ElementSet<double> bricks = random_elements<double>(100, 24, ElementStorage::upper, 12);
        store_tuning_record(context.device(), {"ebe projection f64 l24 k27", {{"columns", 1.0}, {"tiles", 2.0}}});
        const EbeLayoutChoice choice = choose_ebe_layout(context, bricks, 27);
        const bool tensor_runs = ebe_tensor_refusal(context.device(), sizeof(double), 24, 27).empty();
        CHECK(choice.measured_now == tensor_runs);
        CHECK(std::any_of(choice.seconds.begin(), choice.seconds.end(),
                          [](const auto& entry) { return entry.first == "tensor"; }) == tensor_runs);
        if (!tensor_runs) CHECK(choice.layout == EbeLayout::columns);
      },
      test::needs_for<double>());
}

TEST_CASE("EBE refuses bad vectors and options") {
  test::for_each_device([](Context& context) {
    const ElementSet<float> set = random_elements<float>(20, 4, ElementStorage::upper, 1);
    CHECK_THROWS_AS(EbeOperator<float>(context, set, 0), InvalidArgument);
    CHECK_THROWS_AS(EbeOperator<float>(context, set, 65), InvalidArgument);
    EbeOperator<float> op(context, set, 2);
    sparse::DeviceVectors<float> wrong(context, set.dofs, 3), y(context, set.dofs, 2);
    CHECK_THROWS_WITH_AS(op.multiply(wrong, y), doctest::Contains("the operator takes"), InvalidArgument);
    CHECK_THROWS_AS(op.multiply(y, y), InvalidArgument);
    CHECK_THROWS_AS(parse_ebe_scatter("both"), InvalidArgument);
    CHECK(parse_ebe_layout("columns") == EbeLayout::columns);
    CHECK(std::string(to_string(parse_ebe_layout("tiles"))) == "tiles");
    CHECK(parse_ebe_layout("tensor") == EbeLayout::tensor);
    CHECK_THROWS_WITH_AS(parse_ebe_layout("rows"), doctest::Contains("expected tiles, columns or tensor"),
                         InvalidArgument);
  });
}

TEST_CASE_TEMPLATE("EBE products, projections and block products on a small mesh (the Oclgrind subset)" *
                       doctest::test_suite("oclgrind"),
                   T, float, double) {
  test::for_each_device(
      [](Context& context) {
        const ElasticModel<T> model = cantilever<T>({1, 0.4, 0.2, 5, 4, 2}, Material{});  // 40 bricks
        const std::size_t k = 5;
        const std::vector<T> x = random_vectors<T>(model.stiffness.dofs, k, 21);
        for (const EbeScatter scatter : {EbeScatter::colouring, EbeScatter::atomics}) {
          try {
            check_operator(context, model.stiffness, k, scatter);
          } catch (const UnsupportedFeature& e) {
            MESSAGE("atomics skipped: " << e.what());
          }
        }
        EbeOperator<T> resident(context, model.stiffness, k), streamed(context, model.stiffness, k, {EbeScatter::colouring, 32});
        CHECK(device_project(context, streamed, x) == device_project(context, resident, x));
        if constexpr (std::is_same_v<T, double>) {  // the column layout once: Oclgrind is slow on its product
          EbeOperator<T> columns(context, model.stiffness, k, {EbeScatter::colouring, 0, EbeLayout::columns});
          CHECK(device_project(context, columns, x) == device_project(context, resident, x));
        }
        sparse::BlockProducts<T> products(context, model.stiffness.dofs, k, 3);
        sparse::DeviceVectors<T> a(context, model.stiffness.dofs, k), b(context, model.stiffness.dofs, 3);
        a.upload(x);
        b.upload(random_vectors<T>(model.stiffness.dofs, 3, 22));
        DeviceBuffer<T> g(context, k * 3, "G");
        products.gram(a.buffer().get(), b.buffer().get(), g.get());
        products.combine(a.buffer().get(), g.get(), T(1), T(0), b.buffer().get());
        CHECK(b.download().size() == model.stiffness.dofs * 3);
      },
      test::needs_for<T>());
}
