#include "kernel_sources.hpp"

#include <cstdlib>
#include <filesystem>

#include "file_io.hpp"
#include "ziggurat/error.hpp"
#include "ziggurat/program.hpp"

namespace ziggurat {

std::vector<std::string> embedded_kernel_names() {
  std::vector<std::string> names;
  for (const auto& kernel : detail::embedded_kernels()) names.emplace_back(kernel.name);
  return names;
}

std::string kernel_source(std::string_view name) {
  const detail::EmbeddedKernel* embedded = nullptr;
  for (const auto& kernel : detail::embedded_kernels()) {
    if (name == kernel.name) embedded = &kernel;
  }
  if (embedded == nullptr) {
    std::string known;
    for (const auto& kernel_name : embedded_kernel_names()) known += " " + kernel_name;
    throw InvalidArgument("no kernel file '" + std::string(name) + ".cl' is embedded; known:" + known);
  }
  const char* folder = std::getenv("ZIGGURAT_KERNEL_DIR");
  if (folder == nullptr || *folder == '\0') return embedded->source;

  const auto path = std::filesystem::path(folder) / (std::string(name) + ".cl");
  try {
    const auto bytes = detail::read_file(path);
    return std::string(bytes.begin(), bytes.end());
  } catch (const IoError& error) {
    throw IoError(std::string(error.what()) +
                  " (ZIGGURAT_KERNEL_DIR is set; unset it to use the embedded kernels)");
  }
}

}  // namespace ziggurat
