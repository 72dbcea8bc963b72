#pragma once
// Host loops over large arrays split across the machine's cores: the solvers' set-up touches a
// whole matrix (hundreds of MiB) several times, and one core spends most of that time in page
// faults and cache misses. Internal to the library.
#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

#include "ziggurat/base/host_cores.hpp"

namespace ziggurat::detail {

/// Calls body(begin, end) on disjoint ranges covering [0, n), on up to host_threads()
/// threads, none with fewer than `grain` items; returns when all are done. An exception thrown by
/// a body is rethrown here (the first range's first, so that the result does not depend on timing).
template <class Body>
void parallel_for(std::size_t n, std::size_t grain, Body body) {
  const std::size_t cores = host_threads();
  const std::size_t parts = std::max<std::size_t>(1, std::min(cores, n / std::max<std::size_t>(grain, 1)));
  if (parts == 1) {
    body(std::size_t{0}, n);
    return;
  }
  std::vector<std::exception_ptr> errors(parts);
  std::vector<std::thread> threads;
  threads.reserve(parts - 1);
  const auto run = [&](std::size_t part) {
    try {
      body(n * part / parts, n * (part + 1) / parts);
    } catch (...) {
      errors[part] = std::current_exception();
    }
  };
  for (std::size_t part = 1; part < parts; ++part) threads.emplace_back(run, part);
  run(0);
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

/// Calls body(first, last) for the consecutive chunks of `size` items that cover [0, n), on every
/// core. The chunks do not depend on the number of cores, so neither does any result that is
/// combined chunk by chunk in order.
template <class Body>
void for_chunks(std::size_t n, std::size_t size, Body body) {
  const std::size_t chunks = (n + size - 1) / size;
  parallel_for(chunks, 1, [&](std::size_t first, std::size_t last) {
    for (std::size_t c = first; c < last; ++c) body(c * size, std::min(n, (c + 1) * size));
  });
}

}  // namespace ziggurat::detail
