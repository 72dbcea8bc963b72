#pragma once
// Seeded element sets, and references from the assembled matrix, shared by the host and device
// tests of element-by-element operators.

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "ziggurat/matrix/elements.hpp"
#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::test {

/// m random symmetric elements of l DOFs on a sliding window of DOFs (neighbouring elements share
/// DOFs, as in a mesh); every seventh index is constrained (-1).
template <class T>
fem::ElementSet<T> random_elements(std::size_t m, std::size_t l, fem::ElementStorage storage, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(-1, 1);
  fem::ElementSet<T> set;
  set.element_size = l;
  set.storage = storage;
  set.dofs = m + 2 * l;
  for (std::size_t e = 0; e < m; ++e) {
    std::vector<std::int32_t> window(2 * l);
    for (std::size_t i = 0; i < window.size(); ++i) window[i] = static_cast<std::int32_t>(e + i);
    std::shuffle(window.begin(), window.end(), random);
    for (std::size_t i = 0; i < l; ++i) set.indices.push_back((e * l + i) % 7 == 3 ? -1 : window[i]);
    std::vector<double> a(l * l);
    for (std::size_t r = 0; r < l; ++r)
      for (std::size_t c = r; c < l; ++c) a[r * l + c] = a[c * l + r] = value(random) + (r == c ? double(l) : 0);
    for (std::size_t r = 0; r < l; ++r)
      for (std::size_t c = storage == fem::ElementStorage::full ? 0 : r; c < l; ++c)
        set.matrices.push_back(T(a[r * l + c]));
  }
  return set;
}

/// K assembled, its values in double.
template <class T>
sparse::Csr<double> assembled_in_double(const fem::ElementSet<T>& set) {
  const sparse::Csr<T> a = fem::assemble_csr(set);
  return {a.rows, a.cols, a.row_ptr, a.col, std::vector<double>(a.values.begin(), a.values.end())};
}

/// X^T (K X) in double (k x k, row-major), K the assembled CSR.
template <class T>
std::vector<double> assembled_projection(const fem::ElementSet<T>& set, const std::vector<T>& x, std::size_t k) {
  const std::vector<double> xd(x.begin(), x.end());
  const std::vector<double> kx = sparse::multiply(assembled_in_double(set), xd, k);
  std::vector<double> p(k * k, 0.0);
  for (std::size_t i = 0; i < set.dofs; ++i)
    for (std::size_t r = 0; r < k; ++r)
      for (std::size_t c = 0; c < k; ++c) p[r * k + c] += xd[i * k + r] * kx[i * k + c];
  return p;
}

}  // namespace ziggurat::test
