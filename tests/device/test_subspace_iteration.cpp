// The subspace iteration on every device (solver/subspace_iteration.hpp): a cantilever's lowest
// modes against a dense generalised eigensolver, with CG on the assembled K and matrix-free, in
// double and float; a stalled CG, and a model that is not held in place.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../support/devices.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/elements.hpp"
#include "ziggurat/matrix/hex_mesh.hpp"
#include "ziggurat/solver/krylov.hpp"
#include "ziggurat/solver/subspace_iteration.hpp"

using namespace ziggurat;
using namespace ziggurat::fem;

namespace {

// The lowest p eigenvalues of K phi = lambda M phi by a dense solver, from the assembled matrices.
std::vector<double> dense_eigenvalues(const ElementSet<double>& k, const ElementSet<double>& m, std::size_t p) {
  const auto dense = [](const ElementSet<double>& set) {
    const sparse::Csr<double> a = assemble_csr(set);
    Eigen::MatrixXd d = Eigen::MatrixXd::Zero(a.rows, a.cols);
    for (std::size_t r = 0; r < a.rows; ++r)
      for (std::size_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) d(r, a.col[i]) = a.values[i];
    return d;
  };
  Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> solver(dense(k), dense(m));
  return std::vector<double>(solver.eigenvalues().data(), solver.eigenvalues().data() + p);
}

}  // namespace

TEST_CASE("Subspace iteration finds a cantilever's lowest modes (dense reference)") {
  test::for_each_device(
      [](Context& context) {
        for (const MassKind kind : {MassKind::consistent, MassKind::lumped}) {
          const ElasticModel<double> model = cantilever<double>({1, 0.1, 0.15, 10, 2, 2}, Material{}, kind);
          SubspaceOptions options;
          options.modes = 6;
          const SubspaceResult<double> result = subspace_iteration(context, model.stiffness, model.mass, options);
          CHECK(result.converged);
          const std::vector<double> want = dense_eigenvalues(model.stiffness, model.mass, options.modes);
          for (std::size_t i = 0; i < options.modes; ++i) {
            CAPTURE(i);
            CHECK(std::abs(result.eigenvalues[i] - want[i]) <= 1e-8 * want[i]);
            // The vectors converge as the square root of the eigenvalues (changes below 1e-10).
            CHECK(result.residuals[i] < 1e-5);
          }
          CHECK(result.modes.size() == model.stiffness.dofs * options.modes);
        }
      },
      test::Needs::fp64);
}

TEST_CASE("Subspace iteration with CG matrix-free finds the modes CG on the assembled K finds") {
  test::for_each_device(
      [](Context& context) {
        const ElasticModel<double> model = cantilever<double>({1, 0.1, 0.15, 10, 2, 2}, Material{});
        SubspaceOptions options;
        options.modes = 4;
        options.cg_operator = CgOperator::matrix_free;
        options.preconditioner = sparse::PreconditionerKind::block_jacobi;
        const SubspaceResult<double> result = subspace_iteration(context, model.stiffness, model.mass, options);
        CHECK(result.converged);
        const std::vector<double> want = dense_eigenvalues(model.stiffness, model.mass, options.modes);
        for (std::size_t i = 0; i < options.modes; ++i) CHECK(std::abs(result.eigenvalues[i] - want[i]) <= 1e-8 * want[i]);
        options.preconditioner = sparse::PreconditionerKind::ilu0;
        CHECK_THROWS_WITH_AS(subspace_iteration(context, model.stiffness, model.mass, options),
                             doctest::Contains("ILU(0) needs the assembled matrix"), InvalidArgument);
        CHECK(parse_cg_operator("matrix-free") == CgOperator::matrix_free);
        CHECK_THROWS_AS(parse_cg_operator("free"), InvalidArgument);
      },
      test::Needs::fp64);
}

TEST_CASE("Subspace iteration in float") {
  test::for_each_device([](Context& context) {
    const ElasticModel<float> model = cantilever<float>({1, 0.1, 0.15, 10, 2, 2}, Material{});
    const ElasticModel<double> exact = cantilever<double>({1, 0.1, 0.15, 10, 2, 2}, Material{});
    SubspaceOptions options;
    options.modes = 4;
    const SubspaceResult<float> result = subspace_iteration(context, model.stiffness, model.mass, options);
    // Float attains what eps_f times the spread of K's eigenvalues allows (the lowest eigenvalues
    // come from products with large cancellation): it converges to 1e-4, or stops as stagnated.
    CHECK((result.converged || result.reason.find("stagnated") == 0));
    CHECK(result.iterations < 40);
    const std::vector<double> want = dense_eigenvalues(exact.stiffness, exact.mass, options.modes);
    for (std::size_t i = 0; i < options.modes; ++i) CHECK(std::abs(result.eigenvalues[i] - want[i]) <= 5e-3 * want[i]);
  });
}

TEST_CASE("Subspace iteration: a CG stalled at double's accuracy stops early") {
  test::for_each_device(
      [](Context& context) {
        // A slender cantilever whose second iteration's deflated CG stalls at 2.4e-10, above its
        // 1e-10: it ran to its 20,000-iteration limit before the stall rule (a 20x slower solve).
        const ElasticModel<double> model = cantilever<double>({2, 0.1, 0.2, 40, 2, 4}, Material{});
        SubspaceOptions options;
        options.modes = 4;
        options.max_iterations = 3;
        const SubspaceResult<double> result = subspace_iteration(context, model.stiffness, model.mass, options);
        CHECK(result.iterations == 3);
        CHECK(result.solve_iterations < 3000);
      },
      test::Needs::fp64);
}

TEST_CASE("Subspace iteration refuses a model that is not held in place") {
  test::for_each_device(
      [](Context& context) {
        ElasticModel<double> model = cantilever<double>({1, 0.1, 0.1, 4, 1, 1}, Material{});
        // The same elements with every DOF free: renumber the clamped nodes' DOFs as new DOFs.
        ElementSet<double> free_k = model.stiffness, free_m = model.mass;
        std::int32_t next = static_cast<std::int32_t>(free_k.dofs);
        for (std::size_t i = 0; i < free_k.indices.size(); ++i) {
          if (free_k.indices[i] >= 0) continue;
          free_k.indices[i] = free_m.indices[i] = next++;  // each clamped slot its own DOF: still free
        }
        free_k.dofs = free_m.dofs = static_cast<std::size_t>(next);
        SubspaceOptions options;
        options.modes = 2;
        CHECK_THROWS_WITH_AS(subspace_iteration(context, free_k, free_m, options), doctest::Contains("rigid body"),
                             InvalidArgument);
        options.modes = 0;
        CHECK_THROWS_AS(subspace_iteration(context, model.stiffness, model.mass, options), InvalidArgument);
      },
      test::Needs::fp64);
}
