// The model problems of the solver benchmarks (matrix/model_problems.hpp).
#include <doctest/doctest.h>

#include <cmath>

#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/model_problems.hpp"

using namespace ziggurat;
using namespace ziggurat::sparse;

namespace {

// Sum of a row's values, its diagonal, and the largest |off-diagonal|.
struct RowSums {
  double sum = 0, diagonal = 0, off = 0;
  bool positive_off = false;
};

RowSums row_sums(const Bsr<double>& a, std::size_t row) {
  RowSums s;
  for (Index p = a.block_row_ptr[row]; p < a.block_row_ptr[row + 1]; ++p) {
    s.sum += a.values[p];
    if (a.block_col[p] == row) s.diagonal = a.values[p];
    else s.off += std::abs(a.values[p]), s.positive_off |= a.values[p] > 0;
  }
  return s;
}

}  // namespace

TEST_CASE("the scalar model problems: their stencils, Dirichlet faces, symmetry where promised") {
  const std::size_t n = 5, middle = 2 + n * (2 + n * 2), corner = 0;
  for (const ModelProblem problem : {ModelProblem::laplace7, ModelProblem::laplace27, ModelProblem::anisotropic,
                                     ModelProblem::upwind}) {
    CAPTURE(to_string(problem));
    const Bsr<double> a = model_problem<double>(problem, n, n, n);
    REQUIRE_NOTHROW(validate(a));
    CHECK(a.rows == n * n * n);
    CHECK(a.block_size == 1);
    CHECK(parse_model_problem(to_string(problem)) == problem);
    CHECK(model_problem_block_size(problem) == 1);
    const std::size_t couplings = problem == ModelProblem::laplace27 ? 27 : 7;
    CHECK(a.block_row_ptr[middle + 1] - a.block_row_ptr[middle] == couplings);
    const RowSums inside = row_sums(a, middle), edge = row_sums(a, corner);
    CHECK(inside.sum == 0);             // a constant is in the kernel of the interior stencil
    CHECK(edge.sum > 0);                // the Dirichlet faces make the operator definite
    CHECK_FALSE(inside.positive_off);   // M-matrices
    CHECK(inside.diagonal >= inside.off);
    const bool symmetric = problem != ModelProblem::upwind;
    CHECK(asymmetry(to_csr(a)).empty() == symmetric);
  }
  CHECK(row_sums(model_problem<double>(ModelProblem::laplace27, n, n, n), middle).diagonal == 26);
  CHECK(row_sums(model_problem<double>(ModelProblem::anisotropic, n, n, n), middle).diagonal == 204);
}

TEST_CASE("the elasticity model problem: blocks of 3, symmetric, the cube's free nodes") {
  const Bsr<double> a = model_problem<double>(ModelProblem::elasticity, 3, 2, 2);
  REQUIRE_NOTHROW(validate(a));
  CHECK(a.block_size == 3);
  CHECK(model_problem_block_size(ModelProblem::elasticity) == 3);
  CHECK(a.block_rows == 3 * 3 * 3);  // (3 + 1) (2 + 1) (2 + 1) nodes, the x = 0 face's 9 clamped
  CHECK(asymmetry(to_csr(a)).empty());
  for (std::size_t i = 0; i < a.block_rows; ++i) {
    for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p)
      if (a.block_col[p] == i)
        for (std::size_t d = 0; d < 3; ++d) CHECK(a.values[p * 9 + d * 4] > 0);
  }
}

TEST_CASE("model problems refuse unknown names and empty grids") {
  CHECK_THROWS_WITH_AS(parse_model_problem("laplace9"), doctest::Contains("laplace7, laplace27"), InvalidArgument);
  CHECK_THROWS_AS(model_problem<float>(ModelProblem::laplace7, 4, 0, 4), InvalidArgument);
}
