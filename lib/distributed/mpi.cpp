#include "ziggurat/distributed/mpi.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <type_traits>

#include "ziggurat/base/error.hpp"
#include "ziggurat/base/launcher.hpp"
#include "ziggurat/base/precision.hpp"

namespace ziggurat::mpi {

namespace {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

constexpr std::size_t kPiece = std::size_t{1} << 30;  // the largest message, within MPI's int counts

template <class T>
MPI_Datatype datatype() {
  if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  if constexpr (std::is_same_v<T, unsigned long>) return MPI_UNSIGNED_LONG;
}

}  // namespace

bool launched_with_ranks() { return launcher_ranks() > 1; }

Environment::Environment() {
  int initialised = 0;
  check_mpi(MPI_Initialized(&initialised), "MPI_Initialized");
  if (initialised) return;
  check_mpi(MPI_Init(nullptr, nullptr), "MPI_Init");
  initialised_here_ = true;
  // Errors come back as codes (and become exceptions) instead of ending the job silently.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

Environment::~Environment() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (initialised_here_ && !finalised) MPI_Finalize();
}

Communicator::Communicator(MPI_Comm communicator) : communicator_(communicator) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised)
    throw InvalidArgument("a Communicator needs MPI initialised: construct a ziggurat::mpi::Environment (or call "
                          "MPI_Init) first");
  if (communicator == MPI_COMM_NULL) throw InvalidArgument("a Communicator cannot wrap MPI_COMM_NULL");
  check_mpi(MPI_Comm_rank(communicator_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(communicator_, &size_), "MPI_Comm_size");
  MPI_Comm host;
  check_mpi(MPI_Comm_split_type(communicator_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host),
            "MPI_Comm_split_type");
  MPI_Comm_rank(host, &local_rank_);
  MPI_Comm_size(host, &local_size_);
  MPI_Comm_free(&host);
}

void Communicator::abort(const std::string& message) const {
  std::cerr << "ziggurat: rank " << rank_ << " of " << size_ << ": " << message << std::endl;
  MPI_Abort(communicator_, 1);
  std::exit(1);
}

template <class T>
std::vector<T> Communicator::gather(const std::vector<T>& values, int root) const {
  const int count = static_cast<int>(values.size());
  std::vector<int> counts(rank_ == root ? static_cast<std::size_t>(size_) : 0), offsets(counts.size() + 1, 0);
  check_mpi(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, communicator_), "MPI_Gather");
  for (std::size_t r = 0; r < counts.size(); ++r) offsets[r + 1] = offsets[r] + counts[r];
  std::vector<T> all(static_cast<std::size_t>(offsets.back()));
  check_mpi(MPI_Gatherv(values.data(), count, datatype<T>(), all.data(), counts.data(), offsets.data(), datatype<T>(),
                        root, communicator_),
            "MPI_Gatherv");
  return all;
}

double Communicator::max(double value) const {
  double result = value;
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, communicator_), "MPI_Allreduce");
  return result;
}

std::size_t Communicator::min(std::size_t value) const {
  unsigned long in = value, result = value;
  check_mpi(MPI_Allreduce(&in, &result, 1, MPI_UNSIGNED_LONG, MPI_MIN, communicator_), "MPI_Allreduce");
  return result;
}

void Communicator::barrier() const { check_mpi(MPI_Barrier(communicator_), "MPI_Barrier"); }

void Communicator::broadcast(std::string& text, int root) const {
  unsigned long size = text.size();
  check_mpi(MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG, root, communicator_), "MPI_Bcast");
  text.resize(size);
  check_mpi(MPI_Bcast(text.data(), static_cast<int>(size), MPI_CHAR, root, communicator_), "MPI_Bcast");
}

void Communicator::require_agreement(const std::vector<SharedValue>& values) const {
  std::string mine;
  for (const SharedValue& v : values) mine += v.name + '\x1f' + v.value + '\x1e';
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_)), offsets(lengths.size() + 1, 0);
  check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, communicator_), "MPI_Allgather");
  for (std::size_t r = 0; r < lengths.size(); ++r) offsets[r + 1] = offsets[r] + lengths[r];
  std::string all(static_cast<std::size_t>(offsets.back()), '\0');
  check_mpi(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                           communicator_),
            "MPI_Allgatherv");
  const auto of_rank = [&](std::size_t r) {
    std::vector<SharedValue> parsed;
    const std::string text = all.substr(std::size_t(offsets[r]), std::size_t(lengths[r]));
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t split = text.find('\x1f', at), end = text.find('\x1e', split);
      parsed.push_back({text.substr(at, split - at), text.substr(split + 1, end - split - 1)});
      at = end + 1;
    }
    return parsed;
  };
  const std::vector<SharedValue> first = of_rank(0);
  for (std::size_t r = 1; r < lengths.size(); ++r) {
    const std::vector<SharedValue> other = of_rank(r);
    for (std::size_t i = 0; i < std::max(first.size(), other.size()); ++i) {
      const SharedValue none{"(nothing)", "(nothing)"};
      const SharedValue& a = i < first.size() ? first[i] : none;
      const SharedValue& b = i < other.size() ? other[i] : none;
      if (a.name == b.name && a.value == b.value) continue;
      throw InvalidArgument("the ranks disagree on " + (a.name == b.name ? a.name : a.name + " / " + b.name) +
                            ": rank 0 has " + a.value + ", rank " + std::to_string(r) + " has " + b.value +
                            "; give every rank the same arguments, and inputs of the same shape");
    }
  }
}

void HaloTransport::exchange(const std::vector<Send>& sends, const std::vector<Receive>& receives) {
  // Pieces of one message keep their order: MPI does not overtake between one pair of ranks and tag.
  const auto pieces = [](std::size_t bytes) { return std::max<std::size_t>(1, (bytes + kPiece - 1) / kPiece); };
  const auto piece = [](std::size_t bytes, std::size_t p) { return static_cast<int>(std::min(kPiece, bytes - p * kPiece)); };
  std::vector<MPI_Request> requests;
  for (const Receive& r : receives)
    for (std::size_t p = 0; p < pieces(r.bytes); ++p)
      check_mpi(MPI_Irecv(static_cast<char*>(r.data) + p * kPiece, piece(r.bytes, p), MPI_BYTE,
                          static_cast<int>(r.from_block), r.tag, communicator_.get(), &requests.emplace_back()),
                "MPI_Irecv");
  for (const Send& s : sends)
    for (std::size_t p = 0; p < pieces(s.bytes); ++p)
      check_mpi(MPI_Isend(static_cast<const char*>(s.data) + p * kPiece, piece(s.bytes, p), MPI_BYTE,
                          static_cast<int>(s.to_block), s.tag, communicator_.get(), &requests.emplace_back()),
                "MPI_Isend");
  check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

template <class T>
DistributedWave<T>::DistributedWave(const Communicator& communicator, const Context& device,
                                    wave::WaveSystem<T> system, wave::PointSource source, double frequency,
                                    const std::vector<wave::GridNode>& receivers, std::size_t halo_steps)
    : communicator_(communicator),
      transport_(communicator),
      receiver_nodes_(agreed(communicator, system, source, frequency, receivers, halo_steps)),
      solver_({device}, std::move(system), std::move(source), frequency, receivers,
              {{}, halo_steps, static_cast<std::size_t>(communicator.size()),
               static_cast<std::size_t>(communicator.rank()), &transport_}) {}

template <class T>
std::vector<wave::GridNode> DistributedWave<T>::agreed(const Communicator& communicator,
                                                       const wave::WaveSystem<T>& system,
                                                       const wave::PointSource& source, double frequency,
                                                       const std::vector<wave::GridNode>& receivers,
                                                       std::size_t halo_steps) {
  const auto list = [](const auto& values) {
    std::ostringstream text;
    text.precision(17);
    for (const auto& v : values) text << v << " ";
    return text.str();
  };
  std::string nodes;
  for (const wave::GridNode& r : receivers) nodes += list(std::vector<std::size_t>{r.ix, r.iy, r.iz}) + "; ";
  communicator.require_agreement({
      {"the element type", type_name<T>()},
      {"the grid's nodes", list(std::vector<std::size_t>{system.dims, system.nx, system.ny, system.nz})},
      {"the time step", list(std::vector<double>{system.dt})},
      {"K1's diagonals", list(system.k1.offsets)},
      {"the source's DOFs", list(source.dofs)},
      {"the source's forces", list(source.forces)},
      {"the source's frequency", list(std::vector<double>{frequency})},
      {"the receivers", nodes},
      {"the halo steps", std::to_string(halo_steps)},
  });
  return receivers;
}

// This rank's block of `layer` (the whole vector, zero outside the block), joined on rank 0.
template <class T>
std::vector<T> DistributedWave<T>::joined(const std::vector<T>& layer) const {
  const wave::DofRange owned = solver_.blocks().front();
  return communicator_.gather(std::vector<T>(layer.begin() + owned.first, layer.begin() + owned.end()));
}

template <class T>
std::vector<T> DistributedWave<T>::previous() const { return joined(solver_.previous()); }

template <class T>
std::vector<T> DistributedWave<T>::current() const { return joined(solver_.current()); }

template <class T>
void DistributedWave<T>::restore(const std::vector<T>& previous, const std::vector<T>& current, std::size_t steps_done) {
  communicator_.require_agreement({{"the steps done", std::to_string(steps_done)}});
  solver_.restore(previous, current, steps_done);
}

template <class T>
wave::WaveRun<T> DistributedWave<T>::run(std::size_t steps, const std::function<void(const wave::WaveProgress&)>& progress) {
  communicator_.require_agreement({{"the steps", std::to_string(steps)}});
  communicator_.barrier();  // the clocks start together: no rank's time holds another's set-up
  wave::WaveRun<T> mine = solver_.run(steps, progress);
  mine.seconds = communicator_.max(mine.seconds);
  mine.nodes_per_second = mine.seconds > 0 ? double(solver_.system().nodes()) * double(steps) / mine.seconds : 0;
  const wave::DofRange owned = solver_.blocks().front();
  const std::vector<unsigned long> ranges =
      communicator_.gather(std::vector<unsigned long>{owned.first, owned.end()});
  const std::vector<T> all = communicator_.gather(mine.seismograms);
  if (communicator_.rank() != 0) return mine;
  // Each component of receiver r (steps samples) from the rank that owns its DOF: a node's DOFs
  // may lie on two ranks.
  const std::size_t c = solver_.system().dims;
  for (std::size_t r = 0; r < mine.receivers; ++r)
    for (std::size_t component = 0; component < c; ++component) {
      const std::size_t dof = c * solver_.system().node(receiver_nodes_[r]) + component;
      std::size_t owner = 0;
      while (!(dof >= ranges[2 * owner] && dof < ranges[2 * owner + 1])) ++owner;
      for (std::size_t s = 0; s < steps; ++s) {
        const std::size_t at = (r * steps + s) * c + component;
        mine.seismograms[at] = all[owner * mine.seismograms.size() + at];
      }
    }
  return mine;
}

template std::vector<float> Communicator::gather<float>(const std::vector<float>&, int) const;
template std::vector<double> Communicator::gather<double>(const std::vector<double>&, int) const;
template std::vector<unsigned long> Communicator::gather<unsigned long>(const std::vector<unsigned long>&, int) const;
template class DistributedWave<float>;
template class DistributedWave<double>;

}  // namespace ziggurat::mpi
