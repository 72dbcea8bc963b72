#include "ziggurat/matrix/grid.hpp"

#include <limits>

#include "ziggurat/base/error.hpp"

namespace ziggurat {

std::string extents_string(const std::vector<std::size_t>& extents) {
  std::string text;
  for (std::size_t axis = 0; axis < extents.size(); ++axis) {
    text += (axis == 0 ? "" : "x") + std::to_string(extents[axis]);
  }
  return text;
}

std::size_t checked_node_count(const std::vector<std::size_t>& extents) {
  if (extents.empty() || extents.size() > 3) {
    throw InvalidArgument("a grid has 1 to 3 extents, got " + std::to_string(extents.size()));
  }
  std::size_t count = 1;
  for (const std::size_t extent : extents) {
    if (extent == 0) throw InvalidArgument("grid " + extents_string(extents) + " has a zero extent");
    if (count > std::numeric_limits<std::size_t>::max() / extent) {
      throw InvalidArgument("grid " + extents_string(extents) + " has more nodes than memory can address");
    }
    count *= extent;
  }
  return count;
}

}  // namespace ziggurat
