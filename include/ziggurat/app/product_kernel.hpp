#pragma once
// The block CSR kernel a solve's products run, as `ziggurat solve --kernel`, `ziggurat.solve(kernel=)`
// and the eigen-solver choose it: measured by the tuning layer, the rule's, or named.
#include <string>

#include "ziggurat/base/context.hpp"
#include "ziggurat/solver/krylov.hpp"

namespace ziggurat::app {

/// A chooser that times the kernels on the solver's own matrix the first time this kind of matrix
/// meets this device, and reads the tuning record afterwards (tuning/bsr_autotune.hpp).
sparse::ProductKernelChooser measured_product_kernel(const Context& context);

/// Sets the product kernel of `options` from `text`: "auto" (measured_product_kernel), "rule" (the
/// rule's, nothing measured) or a kernel as `ziggurat spmm` names it ("row", "group",
/// "multirow/4", "multirow/1/v8"). InvalidArgument otherwise, naming the choices.
void set_product_kernel(sparse::SolverOptions& options, const Context& context, const std::string& text);

}  // namespace ziggurat::app
