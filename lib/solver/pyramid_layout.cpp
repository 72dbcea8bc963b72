#include "ziggurat/solver/pyramid_layout.hpp"

#include <string>

#include "ziggurat/base/error.hpp"

namespace ziggurat {

const char* to_string(Decomposition decomposition) {
  switch (decomposition) {
    case Decomposition::incore: return "incore";
    case Decomposition::trivial: return "trivial";
    case Decomposition::strip: return "strip";
    case Decomposition::block: return "block";
  }
  return "?";
}

const char* to_string(Schedule schedule) { return schedule == Schedule::serial ? "serial" : "overlapped"; }

void validate(const PyramidLayout& layout, const std::vector<std::size_t>& extents, std::size_t steps) {
  if (layout.decomposition == Decomposition::incore) return;
  if (layout.decomposition == Decomposition::block && extents.size() != 2) {
    throw InvalidArgument("block decomposition is for 2D grids; a " + std::to_string(extents.size()) +
                          "D grid is cut into strips");
  }
  const std::size_t n = layout.decomposition == Decomposition::trivial ? 1 : layout.height;
  if (n < 1 || n > steps) {
    throw InvalidArgument("pyramid height n = " + std::to_string(n) + " must be between 1 and the number of steps " +
                          std::to_string(steps));
  }
  if (layout.task_extent < 1) throw InvalidArgument("a task must own at least one row or block side");
}

std::size_t solver_buffer_layers(Schedule schedule) { return schedule == Schedule::serial ? 2 : 4; }

const char* to_string(HeatTimelineEntry::Engine engine) {
  switch (engine) {
    case HeatTimelineEntry::Engine::upload: return "upload";
    case HeatTimelineEntry::Engine::compute: return "compute";
    case HeatTimelineEntry::Engine::download: return "download";
  }
  return "?";
}

}  // namespace ziggurat
