#pragma once
// Kernel sources and build options.
//
// The library's kernel files (lib/ops/*.cl, one per kernel family, the prologue
// lib/base/prologue.cl that goes in front of each, and the parts that families share, e.g.
// lib/base/group_reduce.cl, put in place of their `#include "base/NAME.cl"` lines) are embedded at
// build time, so nothing is read from disk at run time. For kernel development,
// ZIGGURAT_KERNEL_DIR may name a folder whose NAME.cl files (prologue.cl and the parts included)
// take the place of the embedded ones.

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ziggurat {

/// The source of the kernel family NAME: the prologue, then NAME.cl, each part they include in
/// place of its #include line, once (embedded, or all from $ZIGGURAT_KERNEL_DIR). Throws
/// InvalidArgument for an unknown name or an included file that is no part, and IoError when the
/// override folder lacks a readable NAME.cl, prologue.cl or part.
std::string kernel_source(std::string_view name);

/// The names of the embedded kernel families (the prologue and the parts are none), without ".cl".
std::vector<std::string> embedded_kernel_names();

/// OpenCL build options assembled from -D defines, in the order they are added (the order is
/// part of the program-cache key, so the same calls always give the same string).
class BuildOptions {
 public:
  /// `value`: an integer or a string. Integers are written without a stream, so that no global
  /// C++ locale (the caller's, or one a host process such as Python set) adds digit separators.
  template <class V>
  BuildOptions& define(std::string_view name, const V& value) {
    static_assert(!std::is_floating_point_v<V>, "build options define integers or strings");
    if constexpr (std::is_integral_v<V>) {
      return append("-D" + std::string(name) + "=" + std::to_string(value));
    } else {
      return append("-D" + std::string(name) + "=" + std::string(value));
    }
  }

  /// -DREAL=float|double, and -DREAL_IS_DOUBLE=1 for double (kernels enable cl_khr_fp64 then).
  template <class T>
  BuildOptions& real_type() {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "float or double");
    define("REAL", std::is_same_v<T, float> ? "float" : "double");
    return std::is_same_v<T, double> ? define("REAL_IS_DOUBLE", 1) : *this;
  }

  BuildOptions& append(std::string_view option) {
    if (!text_.empty()) text_ += ' ';
    text_ += option;
    return *this;
  }

  const std::string& str() const noexcept { return text_; }

 private:
  std::string text_;
};

}  // namespace ziggurat
