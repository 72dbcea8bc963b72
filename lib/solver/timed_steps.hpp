#pragma once
// Running many steps of a grid held in device memory and timing them: shared by the in-device
// heat solver and the long-vector algorithm (solver/in_device_heat.cpp, solver/long_vector_heat.cpp).

#include <chrono>
#include <cstddef>

#include "ziggurat/base/context.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/solver/step_timing.hpp"

namespace ziggurat::detail {

// Enqueues `steps` steps on the context's compute queue and waits for them. enqueue(first, last)
// enqueues one step and, where they are not null, sets *first to the event of its first command
// and *last to that of its last. Long runs wait now and then for the batch before last, so that
// the driver never holds more than about 2 x kBatch steps of commands while the device stays busy.
template <class Enqueue>
StepTiming run_timed_steps(const Context& context, std::size_t steps, const char* what, Enqueue enqueue) {
  StepTiming timing;
  timing.steps = steps;
  if (steps == 0) return timing;
  constexpr std::size_t kBatch = 256;
  cl::Event first, last, batch_end;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t step = 0; step < steps; ++step) {
    const bool ends_batch = (step + 1) % kBatch == 0 || step + 1 == steps;
    enqueue(step == 0 ? &first : nullptr, ends_batch ? &last : nullptr);
    if ((step + 1) % kBatch == 0) {
      if (batch_end() != nullptr) check(batch_end.wait(), "clWaitForEvents", what);
      batch_end = last;
    }
  }
  check(context.compute_queue().finish(), "clFinish", what);
  timing.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (context.device().profiling) timing.device_seconds = profiled_seconds(first, last);
  return timing;
}

}  // namespace ziggurat::detail
