#pragma once
// What a run of steps of a grid held in device memory reports about its time
// (solver/in_device_heat.hpp, solver/long_vector_heat.hpp).

#include <cstddef>

namespace ziggurat {

struct StepTiming {
  std::size_t steps = 0;
  double wall_seconds = 0;    ///< host clock, enqueue of the first step to the end of the last
  double device_seconds = -1; ///< profiling counters, first kernel start to last kernel end; -1 without profiling
};

}  // namespace ziggurat
