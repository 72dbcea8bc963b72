#include "ziggurat/app/product_kernel.hpp"

#include "ziggurat/base/error.hpp"
#include "ziggurat/tuning/bsr_autotune.hpp"

namespace ziggurat::app {

sparse::ProductKernelChooser measured_product_kernel(const Context& context) {
  sparse::ProductKernelChooser chooser;
  chooser.f32 = [context](const sparse::DeviceBsr<float>& a, std::size_t k) {
    return sparse::choose_bsr_kernel(context, a, k).kernel;
  };
  chooser.f64 = [context](const sparse::DeviceBsr<double>& a, std::size_t k) {
    return sparse::choose_bsr_kernel(context, a, k).kernel;
  };
  return chooser;
}

void set_product_kernel(sparse::SolverOptions& options, const Context& context, const std::string& text) {
  if (text == "auto") {
    options.choose_product_kernel = measured_product_kernel(context);
  } else if (text != "rule") {
    try {
      options.product_kernel = sparse::parse_bsr_kernel(text);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string(e.what()) + " (or auto: the fastest, measured; rule: multirow by the rule)");
    }
  }
}

}  // namespace ziggurat::app
