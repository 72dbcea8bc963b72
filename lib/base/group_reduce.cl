// The one fixed-order work-group reduction of ziggurat's kernels, a part that a kernel file
// includes with `#include "base/group_reduce.cl"` (kernel_source() puts it in place).
//
// GROUP_REDUCE(SLOT, item, count, COMBINE) folds SLOT(0) .. SLOT(count - 1), values in local
// memory that the group's work-items wrote (count a power of two), into SLOT(0) in a fixed tree:
// at width w = count / 2, ..., 1, work-item `item` < w sets SLOT(item) = COMBINE(SLOT(item),
// SLOT(item + w)). The tree does not depend on timing, so a sum has the same bits every run. Every
// work-item of the group must reach it (it passes barriers); afterwards every work-item may read
// SLOT(0), and a barrier must pass before the slots are written again. SLOT is a macro, so that a
// kernel may reduce in a 2D local array it already holds.
#define GROUP_REDUCE(SLOT, item, count, COMBINE)                                                   \
  for (uint reduce_width = (count) / 2; reduce_width > 0; reduce_width /= 2) {                     \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    if ((uint)(item) < reduce_width) SLOT(item) = COMBINE(SLOT(item), SLOT((item) + reduce_width)); \
  }                                                                                                \
  barrier(CLK_LOCAL_MEM_FENCE)

// The COMBINE of a sum.
#define REDUCE_SUM(a, b) ((a) + (b))

// The larger of a and b, NaN winning: a largest update folded with it is NaN when any update is,
// so a diverged Jacobi sweep is never taken for converged. The COMBINE of a maximum.
inline REAL larger(const REAL a, const REAL b) { return isnan(a) || a > b ? a : b; }
