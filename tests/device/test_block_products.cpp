// Products of tall sets of vectors (ops/block_products.hpp) against host references. (Deflated CG,
// which uses them: test_krylov.cpp.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "../support/devices.hpp"
#include "../support/util.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/ops/block_products.hpp"

using namespace ziggurat;
using namespace ziggurat::sparse;
using test::random_vectors;

namespace {

template <class T>
DeviceBuffer<T> on_device(Context& context, const std::vector<T>& values) {
  DeviceBuffer<T> buffer(context, values.size(), "test values");
  copy_to_device(context.compute_queue(), values.data(), buffer);
  return buffer;
}

template <class T>
std::vector<T> on_host(Context& context, const DeviceBuffer<T>& buffer) {
  std::vector<T> values(buffer.size());
  copy_to_host(context.compute_queue(), buffer, values.data());
  return values;
}

}  // namespace

TEST_CASE_TEMPLATE("block products: A^T B in a fixed order and W H + Z against the host", T, float, double) {
  test::for_each_device(
      [](Context& context) {
        const double tolerance = std::is_same_v<T, double> ? 1e-12 : 2e-5;
        for (const auto& [rows, m, k] : {std::tuple<std::size_t, std::size_t, std::size_t>{1, 1, 1}, {1000, 35, 12},
                                         {4099, 27, 27}, {77, 64, 3}}) {
          CAPTURE(rows);
          CAPTURE(m);
          CAPTURE(k);
          const std::vector<T> a = random_vectors<T>(rows, m, 1), b = random_vectors<T>(rows, k, 2),
                               h = random_vectors<T>(m, k, 3), z = random_vectors<T>(rows, k, 4);
          BlockProducts<T> products(context, rows, m, k);
          DeviceBuffer<T> da = on_device(context, a), db = on_device(context, b), dh = on_device(context, h),
                          dz = on_device(context, z), g(context, m * k, "G");
          products.gram(da.get(), db.get(), g.get());
          const std::vector<T> gram = on_host(context, g);
          products.gram(da.get(), db.get(), g.get());
          CHECK(on_host(context, g) == gram);  // the same bits twice
          double worst = 0, scale = 0;
          for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < k; ++j) {
              double want = 0, size = 0;
              for (std::size_t r = 0; r < rows; ++r) {
                want += double(a[r * m + i]) * double(b[r * k + j]);
                size += std::abs(double(a[r * m + i]) * double(b[r * k + j]));
              }
              worst = std::max(worst, std::abs(gram[i * k + j] - want));
              scale = std::max(scale, size);
            }
          CHECK(worst <= tolerance * scale);
          products.combine(da.get(), dh.get(), T(-2), T(0.5), dz.get());
          const std::vector<T> combined = on_host(context, dz);
          worst = 0;
          for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t j = 0; j < k; ++j) {
              double want = 0.5 * double(z[r * k + j]);
              for (std::size_t i = 0; i < m; ++i) want -= 2 * double(a[r * m + i]) * double(h[i * k + j]);
              worst = std::max(worst, std::abs(combined[r * k + j] - want));
            }
          CHECK(worst <= 10 * tolerance * double(m));
        }
        CHECK_THROWS_AS(BlockProducts<T>(context, 0, 2, 2), InvalidArgument);
        CHECK_THROWS_AS(BlockProducts<T>(context, 10, 65, 2), InvalidArgument);
        CHECK_THROWS_AS(BlockProducts<T>(context, 10, 2, 0), InvalidArgument);
      },
      test::needs_for<T>());
}
