#include "ziggurat/base/launcher.hpp"

#include <cstdlib>
#include <initializer_list>

namespace ziggurat {

namespace {

// A count from the environment: 0 where `name` is unset or not a whole number above 0.
std::size_t count_variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return 0;
  char* end = nullptr;
  const long count = std::strtol(value, &end, 10);
  return end != value && *end == '\0' && count > 0 ? static_cast<std::size_t>(count) : 0;
}

}  // namespace

std::size_t launcher_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_STEP_NUM_TASKS"})
    if (const std::size_t count = count_variable(name)) return count;
  if (std::getenv("PMIX_RANK") != nullptr)
    if (const std::size_t count = count_variable("SLURM_NTASKS")) return count;
  return 1;
}

}  // namespace ziggurat
