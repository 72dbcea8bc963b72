#pragma once
// --vtk of heat and poisson: the final field as a VTK image ParaView opens (.vti, written by
// app::write_field_vtk), or under MPI ranks as one piece a rank named by a .pvti.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "file_options.hpp"
#include "ziggurat/app/output_files.hpp"

namespace ziggurat::cli {

/// Adds --vtk FILE to `command` (an output: checked before any work).
void add_vtk_option(CLI::App* command, FileOptions& files, std::string& path);

/// Throws InvalidArgument unless `path` ends in .vti or .pvti (.pvti with several ranks).
void check_vtk_name(const std::string& path, bool ranks);

/// Rank `rank`'s piece, `values`, of a grid split along its slowest axis into `slabs` (each
/// rank's first row and row count), beside the .pvti `path`; rank 0 also writes the .pvti naming
/// every rank's piece.
template <class T>
void write_slab_vtk(const std::string& path, const T* values, const std::vector<std::size_t>& extents,
                    const std::vector<std::pair<std::size_t, std::size_t>>& slabs, std::size_t rank,
                    const std::string& name);

}  // namespace ziggurat::cli
