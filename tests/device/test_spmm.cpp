// Sparse products on every device against the sequential CPU reference (sparse.hpp): every block
// CSR strategy, CSR and DIA, for b = 1..8 and k = 1..16, on edge cases and on real matrices.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../support/devices.hpp"
#include "../support/util.hpp"
#include "ziggurat/automatic/spmm.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/io/matrix_market.hpp"
#include "ziggurat/ops/spmm.hpp"
#include "ziggurat/tuning/bsr_autotune.hpp"
#include "ziggurat/tuning/profile_store.hpp"

using namespace ziggurat;
using namespace ziggurat::sparse;
using test::random_vectors;

namespace {

// A seeded random m x n CSR matrix: each entry present with probability `density`; rows listed
// in `empty_rows` have none.
template <class T>
Csr<T> random_csr(std::size_t m, std::size_t n, double density, std::uint64_t seed,
                  const std::vector<std::size_t>& empty_rows = {}) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(-1, 1), coin(0, 1);
  Csr<T> a;
  a.rows = m;
  a.cols = n;
  for (std::size_t r = 0; r < m; ++r) {
    const bool empty = std::find(empty_rows.begin(), empty_rows.end(), r) != empty_rows.end();
    for (std::size_t c = 0; c < n && !empty; ++c) {
      if (coin(random) >= density) continue;
      a.col.push_back(static_cast<Index>(c));
      a.values.push_back(static_cast<T>(value(random)));
    }
    a.row_ptr.push_back(static_cast<Index>(a.col.size()));
  }
  return a;
}

template <class M>
M absolute(M a) {
  for (auto& v : a.values) v = std::abs(v);
  return a;
}

// |y - reference| <= 2 (terms + 1) eps (|A| |X|) element by element, where terms bounds the
// products summed into one element: the rounding error bound of a sum in any order.
template <class T, class M>
void check_product(const M& a, const std::vector<T>& x, std::size_t k, const std::vector<T>& y, std::size_t terms,
                   const std::string& what) {
  const std::vector<T> reference = multiply(a, x, k);
  std::vector<T> ax = x;
  for (T& v : ax) v = std::abs(v);
  const std::vector<T> bound = multiply(absolute(a), ax, k);
  REQUIRE(y.size() == reference.size());
  const double eps = std::numeric_limits<T>::epsilon();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double tolerance = 2.0 * static_cast<double>(terms + 1) * eps * static_cast<double>(bound[i]);
    if (!(std::abs(static_cast<double>(y[i]) - static_cast<double>(reference[i])) <= tolerance)) ++wrong;
  }
  INFO(what);
  CHECK(wrong == 0);
}

template <class T>
std::size_t longest_row(const Bsr<T>& a) {
  std::size_t most = 0;
  for (std::size_t r = 0; r < a.block_rows; ++r) most = std::max<std::size_t>(most, a.block_row_ptr[r + 1] - a.block_row_ptr[r]);
  return most * a.block_size;
}

// multirow with one lane and scalar accesses, and with lanes and vector width by the rule (1 to 4
// lanes as b * k allows, the widest vector dividing k).
const BsrKernel kVariants[] = {{BsrStrategy::row, 0, 0}, {BsrStrategy::group, 0, 0}, {BsrStrategy::multirow, 1, 1},
                               {BsrStrategy::multirow, 0, 0}};

template <class T>
void check_bsr(Context& context, const Csr<T>& csr, std::size_t b, std::size_t k, const BsrKernel& kernel,
               std::uint64_t seed) {
  const Bsr<T> a = to_bsr(csr, b);
  const DeviceBsr<T> device(context, a);
  const std::vector<T> x = random_vectors<T>(a.cols, k, seed);
  const std::vector<T> y = multiply(context, device, x, k, kernel);
  check_product(a, x, k, y, longest_row(a),
                kernel.name() + " b=" + std::to_string(b) + " k=" + std::to_string(k) + " on " +
                    std::to_string(a.rows) + " x " + std::to_string(a.cols));
}

std::filesystem::path matrix_file(const char* name) {
  return std::filesystem::path(ZIGGURAT_TEST_DATA_DIR) / "matrices" / name;
}

}  // namespace

TEST_CASE("block CSR products match the reference for b = 1..8 and k = 1..16") {
  test::for_each_device([](Context& context) {
    // 37 x 29: no b from 2 to 8 divides both, so every b has partial blocks to zero-fill.
    const Csr<float> csr = random_csr<float>(37, 29, 0.15, 7, {3, 4});
    for (std::size_t b = 1; b <= 8; ++b) {
      for (std::size_t k = 1; k <= 16; ++k) {
        // Every strategy meets every b, and each (b, k) pair one of them.
        check_bsr(context, csr, b, k, kVariants[(b + k) % 4], 100 * b + k);
      }
    }
  });
}

TEST_CASE_TEMPLATE("every block CSR strategy on rows longer than a work-group holds", T, float, double) {
  test::for_each_device(
      [](Context& context) {
        // 300 blocks in a row: more than the group strategy stages at once, so it loops.
        const Csr<T> wide = random_csr<T>(9, 1200, 0.5, 11);
        const Csr<T> square = random_csr<T>(64, 64, 0.2, 12);
        for (const BsrKernel& kernel : kVariants) {
          for (std::size_t b : {1, 4}) {
            check_bsr(context, wide, b, 8, kernel, 13);
            check_bsr(context, square, b, 3, kernel, 14);
          }
          // k = 20: two launches, vectors 0..15 and 16..19.
          check_bsr(context, square, 2, 20, kernel, 15);
          for (std::size_t lanes : {2, 8, 32}) check_bsr(context, wide, 3, 1, {BsrStrategy::multirow, lanes, 1}, 16);
        }
      },
      test::needs_for<T>());
}

TEST_CASE_TEMPLATE("sparse products on edge cases: empty rows, one row, one block, an empty matrix", T, float, double) {
  test::for_each_device(
      [](Context& context) {
        for (const BsrKernel& kernel : kVariants) {
          check_bsr(context, random_csr<T>(20, 20, 0.3, 21, {0, 5, 6, 19}), 3, 2, kernel, 22);  // empty rows
          check_bsr(context, random_csr<T>(1, 50, 0.5, 23), 4, 5, kernel, 24);                   // a single row
          check_bsr(context, random_csr<T>(4, 4, 1.0, 25), 4, 3, kernel, 26);                    // one block
          check_bsr(context, random_csr<T>(5, 3, 1.0, 27), 8, 1, kernel, 28);                    // one partial block
          check_bsr(context, random_csr<T>(6, 6, 0.0, 29), 2, 2, kernel, 30);                    // nothing stored
        }
      },
      test::needs_for<T>());
}

TEST_CASE_TEMPLATE("CSR products on the device are block CSR with b = 1", T, float, double) {
  test::for_each_device(
      [](Context& context) {
        const Csr<T> a = random_csr<T>(123, 77, 0.08, 31, {10, 11});
        const DeviceBsr<T> device(context, a);
        CHECK(device.block_size() == 1);
        for (std::size_t k : {1, 4, 9}) {
          const std::vector<T> x = random_vectors<T>(a.cols, k, 32);
          for (const BsrKernel& kernel : kVariants) {
            check_product(a, x, k, multiply(context, device, x, k, kernel), 77, "CSR " + kernel.name());
          }
        }
      },
      test::needs_for<T>());
}

TEST_CASE_TEMPLATE("DIA products, general and symmetric half-stored", T, float, double) {
  test::for_each_device(
      [](Context& context) {
        // A symmetric band matrix with offsets -3..3, some inner diagonals absent.
        const std::size_t n = 41;
        Csr<T> band;
        band.rows = band.cols = n;
        std::mt19937_64 random(41);
        std::uniform_real_distribution<double> value(-1, 1);
        std::vector<std::vector<T>> dense(n, std::vector<T>(n, T(0)));
        for (std::size_t i = 0; i < n; ++i) {
          dense[i][i] = static_cast<T>(4 + value(random));
          for (std::size_t o : {1, 3}) {
            if (i + o < n) dense[i][i + o] = dense[i + o][i] = static_cast<T>(value(random));
          }
        }
        for (std::size_t i = 0; i < n; ++i) {
          for (std::size_t j = 0; j < n; ++j) {
            if (dense[i][j] == T(0)) continue;
            band.col.push_back(static_cast<Index>(j));
            band.values.push_back(dense[i][j]);
          }
          band.row_ptr.push_back(static_cast<Index>(band.col.size()));
        }
        for (bool symmetric : {false, true}) {
          const Dia<T> dia = to_dia(band, symmetric);
          CHECK(dia.offsets.size() == (symmetric ? 3u : 5u));
          const DeviceDia<T> device(context, dia);
          for (std::size_t k : {1, 3, 17}) {
            const std::vector<T> x = random_vectors<T>(n, k, 42 + k);
            const std::vector<T> y = multiply(context, device, x, k);
            check_product(dia, x, k, y, 5, std::string(symmetric ? "symmetric" : "general") + " DIA k=" + std::to_string(k));
            check_product(band, x, k, y, 5, "DIA against CSR");
          }
        }
        // A rectangular band (more columns than rows).
        const Csr<T> wide = random_csr<T>(8, 12, 1.0, 43);
        const Dia<T> dia = to_dia(wide, false, 100.0);
        const std::vector<T> x = random_vectors<T>(12, 2, 44);
        check_product(wide, x, 2, multiply(context, DeviceDia<T>(context, dia), x, 2), 12, "rectangular DIA");
      },
      test::needs_for<T>());
}

TEST_CASE_TEMPLATE("sparse products of the real matrices (SuiteSparse)", T, float, double) {
  test::for_each_device(
      [](Context& context) {
        for (const char* name : {"bcsstk01.mtx", "can___24.mtx", "west0067.mtx", "fs_183_1.mtx"}) {
          const Csr<T> a = read_matrix_market<T>(matrix_file(name)).matrix;
          const std::vector<T> x = random_vectors<T>(a.cols, 8, 51);
          std::size_t longest = 0;
          for (std::size_t r = 0; r < a.rows; ++r) longest = std::max<std::size_t>(longest, a.row_ptr[r + 1] - a.row_ptr[r]);
          for (std::size_t b : {std::size_t{1}, std::size_t{3}, propose_block_size(a)}) {
            for (const BsrKernel& kernel : kVariants) check_bsr(context, a, b, 8, kernel, 52);
          }
          check_product(a, x, 8, multiply(context, DeviceBsr<T>(context, a), x, 8, BsrKernel{BsrStrategy::multirow, 2, 0}),
                        longest, std::string(name) + " as CSR");
          const Dia<T> dia = to_dia(a, false, 1e9);
          check_product(a, x, 8, multiply(context, DeviceDia<T>(context, dia), x, 8), dia.offsets.size(),
                        std::string(name) + " as DIA");
        }
      },
      test::needs_for<T>());
}

TEST_CASE("the automatic choice is measured once on a cold cache, without calibrating, kept as a record, then read") {
  test::for_each_device([](Context& context) {
    test::TempDir dir;
    test::EnvGuard cache("ZIGGURAT_CACHE_DIR", dir.path().c_str()), on("ZIGGURAT_CACHE", nullptr);
    const Bsr<float> a = seven_point_bsr<float>(6, 5, 4, 3, 61);
    const DeviceBsr<float> device(context, a);
    const BsrChoice first = choose_bsr_kernel(context, device, 4);
    CHECK(first.measured_now);
    REQUIRE(first.seconds.size() >= 3);
    CHECK(first.seconds.front().first == first.kernel.name());
    for (std::size_t i = 1; i < first.seconds.size(); ++i) CHECK(first.seconds[i - 1].second <= first.seconds[i].second);
    // Choosing a kernel measured the variants only: no device profile was calibrated.
    CHECK_FALSE(load_cached_profile(context.device()).has_value());
    CHECK_FALSE(std::filesystem::exists(dir.path() / "profiles"));
    const auto record = load_tuning_record(context.device(), first.key);
    REQUIRE(record.has_value());
    CHECK(record->seconds == first.seconds);
    const BsrChoice again = choose_bsr_kernel(context, device, 4);
    CHECK_FALSE(again.measured_now);
    CHECK(again.kernel.name() == first.kernel.name());
    CHECK(again.key == first.key);
    // The chosen kernel gives the right answer, through the one-call form too.
    const std::vector<float> x = random_vectors<float>(a.cols, 4, 62);
    check_product(a, x, 4, multiply_autotuned(context, device, x, 4), longest_row(a), "autotuned");
    check_product(a, x, 4, multiply(context, device, x, 4, again.kernel), longest_row(a), "chosen");
    // Without a kernel given, a product runs multirow by the rule, which needs no measurement.
    const BsrMultiplier<float> by_rule(context, device, 4, {});
    CHECK(by_rule.kernel().strategy == BsrStrategy::multirow);
    CHECK(by_rule.kernel().lanes >= 1);
    check_product(a, x, 4, multiply(context, device, x, 4, {}), longest_row(a), "multirow by the rule");
  });
}

TEST_CASE("sparse products refuse mismatched operands with clear errors") {
  test::for_each_device([](Context& context) {
    const Bsr<float> a = to_bsr(random_csr<float>(10, 7, 0.3, 71), 2);
    const DeviceBsr<float> device(context, a);
    BsrMultiplier<float> product(context, device, 2, {BsrStrategy::row, 0, 0});
    DeviceVectors<float> x = input_vectors(context, device, 2);
    DeviceVectors<float> y = output_vectors(context, device, 2);
    DeviceVectors<float> short_x(context, 7, 2);  // not padded to whole blocks
    CHECK_THROWS_WITH_AS(product.enqueue(short_x, y), doctest::Contains("padded to at least 8"), InvalidArgument);
    DeviceVectors<float> wrong_k = input_vectors(context, device, 3);
    CHECK_THROWS_WITH_AS(product.enqueue(wrong_k, y), doctest::Contains("X is 7 x 3"), InvalidArgument);
    CHECK_THROWS_AS(product.enqueue(x, x), InvalidArgument);
    CHECK_THROWS_WITH_AS(x.upload(std::vector<float>(5)), doctest::Contains("5 values given, 7 x 2 expected"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(BsrMultiplier<float>(context, device, 2, {BsrStrategy::multirow, 3, 1}),
                         doctest::Contains("power of two"), InvalidArgument);
    CHECK_THROWS_AS(BsrMultiplier<float>(context, device, 0, {BsrStrategy::row, 0}), InvalidArgument);
    CHECK_THROWS_WITH_AS(parse_bsr_strategy("fast"), doctest::Contains("unknown block CSR kernel 'fast'"), InvalidArgument);
  });
}

TEST_CASE("vectors go to and from memory the caller holds, and refuse a wrong count") {
  test::for_each_device([](Context& context) {
    DeviceVectors<float> x(context, 7, 2, 8);
    const std::vector<float> values = random_vectors<float>(7, 2, 91);
    x.upload(values.data(), values.size());
    std::vector<float> back(values.size(), -1.0f);
    x.download(back.data(), back.size());
    CHECK(back == values);
    CHECK(x.download() == values);
    CHECK_THROWS_WITH_AS(x.upload(values.data(), 13), doctest::Contains("13 values given, 7 x 2 expected"), InvalidArgument);
    CHECK_THROWS_WITH_AS(x.download(back.data(), 15), doctest::Contains("15 values asked for, 7 x 2 expected"),
                         InvalidArgument);
  });
}

TEST_CASE_TEMPLATE("sparse products on small matrices (the Oclgrind subset)" * doctest::test_suite("oclgrind"), T, float,
                   double) {
  test::for_each_device(
      [](Context& context) {
        const Csr<T> csr = random_csr<T>(11, 9, 0.4, 81, {2});
        for (const BsrKernel& kernel : kVariants) check_bsr(context, csr, 3, 2, kernel, 82);
        check_bsr(context, random_csr<T>(3, 40, 0.6, 83), 2, 1, {BsrStrategy::group, 0, 0}, 84);
        const Dia<T> dia = to_dia(random_csr<T>(7, 7, 0.3, 85), false, 100.0);
        const std::vector<T> x = random_vectors<T>(7, 2, 86);
        check_product(dia, x, 2, multiply(context, DeviceDia<T>(context, dia), x, 2), 7, "DIA");
      },
      test::needs_for<T>());
}
