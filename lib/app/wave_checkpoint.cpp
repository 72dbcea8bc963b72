#include "ziggurat/app/wave_checkpoint.hpp"

#include <cstring>
#include <string>

#include "base/hash.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"
#include "ziggurat/base/precision.hpp"

namespace ziggurat::app {

namespace {

constexpr const char* kMagic = "ziggurat wave checkpoint 1\n";

template <class V>
std::uint64_t checksum(const std::vector<V>& values, std::uint64_t hash) {
  return detail::fnv1a64(values.data(), values.size() * sizeof(V), hash);
}

// The first key whose value differs, as "KEY: A in the file, B in this run".
std::string first_difference(const nlohmann::json& file, const nlohmann::json& run) {
  for (const auto& [key, value] : run.items())
    if (!file.contains(key) || file[key] != value)
      return key + ": " + (file.contains(key) ? file[key].dump() : "none") + " in the file, " + value.dump() +
             " in this run";
  return "the keys of the file";
}

}  // namespace

template <class T>
nlohmann::json wave_run_identity(const WaveSetup& setup, const wave::WaveSystem<T>& system, double frequency) {
  std::uint64_t hash = checksum(system.k1.offsets, 0xcbf29ce484222325ull);
  hash = checksum(system.k2, checksum(system.inverse_mass, checksum(system.k1.values, hash)));
  nlohmann::json receivers = nlohmann::json::array();
  for (const wave::GridNode& r : setup.receivers) receivers.push_back(node_json(system.dims, r));
  return {{"precision", type_name<T>()},
          {"nodes", {system.nx, system.ny, system.nz}},
          {"dx_m", setup.grid.dx},
          {"dt_s", system.dt},
          {"absorbing_cells", setup.absorbing},
          {"source_dofs", setup.source.dofs},
          {"source_forces", setup.source.forces},
          {"frequency_hz", frequency},
          {"receivers", receivers},
          {"system_checksum", hash}};
}

template <class T>
void write_wave_checkpoint(const std::filesystem::path& path, const WaveCheckpoint<T>& state,
                           const nlohmann::json& identity) {
  const std::string header = std::string(kMagic) +
                             nlohmann::json{{"run", identity},
                                            {"steps_done", state.steps_done},
                                            {"dofs", state.current.size()},
                                            {"seismogram_values", state.seismograms.size()}}
                                 .dump() +
                             "\n";
  write_file_atomically(path, {{header.data(), header.size()},
                               {state.previous.data(), state.previous.size() * sizeof(T)},
                               {state.current.data(), state.current.size() * sizeof(T)},
                               {state.seismograms.data(), state.seismograms.size() * sizeof(T)}});
}

template <class T>
WaveCheckpoint<T> read_wave_checkpoint(const std::filesystem::path& path, const nlohmann::json& identity) {
  const std::vector<unsigned char> bytes = read_file(path);
  const std::string text(bytes.begin(), bytes.end());
  const std::size_t magic = std::strlen(kMagic), end = text.find('\n', magic);
  const std::string not_one = path.string() + " is no wave checkpoint (written by `ziggurat wave --checkpoint` when a "
                                              "signal stops the run)";
  if (text.compare(0, magic, kMagic) != 0 || end == std::string::npos) throw InvalidArgument(not_one);
  nlohmann::json header;
  WaveCheckpoint<T> state;
  std::size_t dofs = 0, seismogram_values = 0;
  try {
    header = nlohmann::json::parse(text.substr(magic, end - magic));
    state.steps_done = header.at("steps_done").get<std::size_t>();
    dofs = header.at("dofs").get<std::size_t>();
    seismogram_values = header.at("seismogram_values").get<std::size_t>();
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(not_one + ": " + e.what());
  }
  if (header["run"] != identity)
    throw InvalidArgument(path.string() + " holds the state of another run (" +
                          first_difference(header["run"], identity) +
                          "): resume with the options of the run that wrote it");
  const std::size_t values = 2 * dofs + seismogram_values;
  if (bytes.size() - (end + 1) != values * sizeof(T))
    throw InvalidArgument(path.string() + " is cut short or too long: " + std::to_string(values * sizeof(T)) +
                          " bytes of values expected after its header, " + std::to_string(bytes.size() - end - 1) +
                          " found");
  const unsigned char* at = bytes.data() + end + 1;
  const auto take = [&](std::vector<T>& into, std::size_t count) {
    into.resize(count);
    std::memcpy(into.data(), at, count * sizeof(T));
    at += count * sizeof(T);
  };
  take(state.previous, dofs);
  take(state.current, dofs);
  take(state.seismograms, seismogram_values);
  return state;
}

#define ZIGGURAT_WAVE_CHECKPOINT(T)                                                                                \
  template nlohmann::json wave_run_identity<T>(const WaveSetup&, const wave::WaveSystem<T>&, double);           \
  template void write_wave_checkpoint<T>(const std::filesystem::path&, const WaveCheckpoint<T>&,                 \
                                         const nlohmann::json&);                                                 \
  template WaveCheckpoint<T> read_wave_checkpoint<T>(const std::filesystem::path&, const nlohmann::json&);
ZIGGURAT_WAVE_CHECKPOINT(float)
ZIGGURAT_WAVE_CHECKPOINT(double)
#undef ZIGGURAT_WAVE_CHECKPOINT

}  // namespace ziggurat::app
