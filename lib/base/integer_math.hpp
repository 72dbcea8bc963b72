#pragma once
// Integer helpers for sizes, launch shapes and tilings.

#include <algorithm>
#include <cstddef>

namespace ziggurat::detail {

/// ceil(a / b) for b > 0.
constexpr std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

/// The smallest multiple of `multiple` (> 0) that is >= value.
constexpr std::size_t round_up(std::size_t value, std::size_t multiple) { return ceil_div(value, multiple) * multiple; }

constexpr bool is_power_of_two(std::size_t n) { return n != 0 && (n & (n - 1)) == 0; }

/// The largest power of two <= limit (1 when limit < 2).
constexpr std::size_t power_of_two_at_most(std::size_t limit) {
  std::size_t p = 1;
  while (p <= limit / 2) p *= 2;
  return p;
}

/// The widest OpenCL vector (a power of two, at most `most`, itself a power of two) whose width
/// divides n: the pieces that kernels read rows of n interleaved values in.
constexpr std::size_t widest_vector_dividing(std::size_t n, std::size_t most = 16) {
  std::size_t width = most;
  while (n % width != 0) width /= 2;
  return width;
}

/// The smallest power of two >= n.
constexpr std::size_t power_of_two_at_least(std::size_t n) {
  std::size_t p = 1;
  while (p < n) p *= 2;
  return p;
}

}  // namespace ziggurat::detail
