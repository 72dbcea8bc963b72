#include "ziggurat/matrix/nested_dissection.hpp"

#include <metis.h>

#include <algorithm>
#include <string>

#include "ziggurat/base/error.hpp"

namespace ziggurat::sparse {

namespace {

static_assert(sizeof(idx_t) == 4 || sizeof(idx_t) == 8, "METIS idx_t of 32 or 64 bits");

constexpr std::size_t kMaxDepth = 8, kLeafRows = 64, kLeastSplit = 8;

// The pattern made symmetric, without the diagonal and without repeated neighbours.
template <class T>
std::vector<std::vector<Index>> neighbours(const Bsr<T>& a) {
  std::vector<std::vector<Index>> adjacent(a.block_rows);
  for (std::size_t i = 0; i < a.block_rows; ++i) {
    for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p) {
      const Index j = a.block_col[p];
      if (j == i) continue;
      adjacent[i].push_back(j);
      adjacent[j].push_back(static_cast<Index>(i));
    }
  }
  for (auto& list : adjacent) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return adjacent;
}

struct Node {
  std::vector<Index> rows;  // old block rows, increasing
  std::size_t stage = 0;
  std::size_t order = 0;    // left to right inside the tree
};

class Dissector {
 public:
  explicit Dissector(std::vector<std::vector<Index>> adjacent)
      : adjacent_(std::move(adjacent)), local_(adjacent_.size(), kNone) {
    METIS_SetDefaultOptions(options_);
    options_[METIS_OPTION_NUMBERING] = 0;
    options_[METIS_OPTION_SEED] = 1;
  }

  // Splits `rows` (increasing) `depth` more times; returns the stage of the subtree's root.
  std::size_t dissect(std::vector<Index> rows, std::size_t depth) {
    if (depth > 0 && rows.size() >= kLeastSplit) {
      std::vector<idx_t> part = separate(rows);
      std::vector<Index> side[3];
      for (std::size_t v = 0; v < rows.size(); ++v) side[part[v]].push_back(rows[v]);
      if (!side[0].empty() && !side[1].empty()) {
        const std::size_t left = dissect(std::move(side[0]), depth - 1);
        const std::size_t right = dissect(std::move(side[1]), depth - 1);
        const std::size_t stage = 1 + std::max(left, right);
        if (!side[2].empty()) nodes_.push_back({std::move(side[2]), stage, nodes_.size()});
        return stage;
      }
    }
    nodes_.push_back({std::move(rows), 0, nodes_.size()});
    return 0;
  }

  std::vector<Node>& nodes() { return nodes_; }

 private:
  static constexpr Index kNone = ~Index{0};

  // METIS' part of every row: 0 or 1, or 2 for the separator.
  std::vector<idx_t> separate(const std::vector<Index>& rows) {
    for (std::size_t v = 0; v < rows.size(); ++v) local_[rows[v]] = static_cast<Index>(v);
    std::vector<idx_t> xadj{0}, adjncy;
    xadj.reserve(rows.size() + 1);
    for (Index row : rows) {
      for (Index j : adjacent_[row])
        if (local_[j] != kNone) adjncy.push_back(static_cast<idx_t>(local_[j]));
      xadj.push_back(static_cast<idx_t>(adjncy.size()));
    }
    for (Index row : rows) local_[row] = kNone;
    idx_t vertices = static_cast<idx_t>(rows.size()), separator = 0;
    std::vector<idx_t> part(rows.size(), 0);
    if (adjncy.empty()) {  // no couplings: halves, no separator (METIS needs edges)
      std::fill(part.begin() + part.size() / 2, part.end(), 1);
      return part;
    }
    const int status =
        METIS_ComputeVertexSeparator(&vertices, xadj.data(), adjncy.data(), nullptr, options_, &separator, part.data());
    if (status != METIS_OK) {
      throw Error("nested dissection: METIS_ComputeVertexSeparator failed (status " + std::to_string(status) + ") on " +
                  std::to_string(rows.size()) + " block rows");
    }
    return part;
  }

  std::vector<std::vector<Index>> adjacent_;
  std::vector<Index> local_;  // the local number of a row of the part being separated
  idx_t options_[METIS_NOPTIONS];
  std::vector<Node> nodes_;
};

}  // namespace

std::size_t default_dissection_depth(std::size_t block_rows) {
  std::size_t depth = 0;
  while (depth < kMaxDepth && (block_rows >> (depth + 1)) >= kLeafRows) ++depth;
  return depth;
}

template <class T>
DissectionTree nested_dissection(const Bsr<T>& a, std::size_t depth) {
  validate(a);
  if (a.block_rows != a.block_cols) {
    throw InvalidArgument("nested dissection needs a square block structure; the matrix has " +
                          std::to_string(a.block_rows) + " x " + std::to_string(a.block_cols) + " blocks");
  }
  Dissector dissector(neighbours(a));
  std::vector<Index> all(a.block_rows);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<Index>(i);
  dissector.dissect(std::move(all), depth == 0 ? default_dissection_depth(a.block_rows) : depth);
  // Leaves in the order they were made (left to right), then each stage of separators.
  std::vector<Node>& nodes = dissector.nodes();
  std::stable_sort(nodes.begin(), nodes.end(), [](const Node& x, const Node& y) {
    return x.stage != y.stage ? x.stage < y.stage : x.order < y.order;
  });
  DissectionTree tree;
  tree.old_of_new.reserve(a.block_rows);
  for (const Node& node : nodes) {
    if (node.rows.empty()) continue;
    tree.old_of_new.insert(tree.old_of_new.end(), node.rows.begin(), node.rows.end());
    tree.node_ptr.push_back(static_cast<Index>(tree.old_of_new.size()));
    tree.stage.push_back(static_cast<Index>(node.stage));
    if (node.stage == 0) ++tree.leaves;
  }
  return tree;
}

template DissectionTree nested_dissection<float>(const Bsr<float>&, std::size_t);
template DissectionTree nested_dissection<double>(const Bsr<double>&, std::size_t);

}  // namespace ziggurat::sparse
