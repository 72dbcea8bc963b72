#include "ziggurat/distributed/mpi.hpp"

#include <mpi.h>

#include <cstdlib>
#include <iostream>
#include <type_traits>

#include "ziggurat/base/error.hpp"

namespace ziggurat::mpi {

namespace {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

template <class T>
MPI_Datatype datatype() {
  if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  if constexpr (std::is_same_v<T, unsigned long>) return MPI_UNSIGNED_LONG;
}

}  // namespace

bool launched_with_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && std::atoi(value) > 1) return true;
  }
  return false;
}

Environment::Environment() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) check_mpi(MPI_Init(nullptr, nullptr), "MPI_Init");
  // Errors come back as codes (and become exceptions) instead of ending the job silently.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

Environment::~Environment() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Finalize();
}

Communicator::Communicator() {
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  MPI_Comm host;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host),
            "MPI_Comm_split_type");
  MPI_Comm_rank(host, &local_rank_);
  MPI_Comm_size(host, &local_size_);
  MPI_Comm_free(&host);
}

void Communicator::abort(const std::string& message) const {
  std::cerr << "ziggurat: rank " << rank_ << " of " << size_ << ": " << message << std::endl;
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

template <class T>
std::vector<T> Communicator::gather(const std::vector<T>& values, int root) const {
  std::vector<T> all(rank_ == root ? values.size() * static_cast<std::size_t>(size_) : 0);
  check_mpi(MPI_Gather(values.data(), static_cast<int>(values.size()), datatype<T>(), all.data(),
                       static_cast<int>(values.size()), datatype<T>(), root, MPI_COMM_WORLD),
            "MPI_Gather");
  return all;
}

double Communicator::max(double value) const {
  double result = value;
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return result;
}

void HaloTransport::exchange(const std::vector<Send>& sends, const std::vector<Receive>& receives) {
  std::vector<MPI_Request> requests(sends.size() + receives.size());
  std::size_t i = 0;
  for (const Receive& r : receives)
    check_mpi(MPI_Irecv(r.data, static_cast<int>(r.bytes), MPI_BYTE, static_cast<int>(r.from_block), r.tag,
                        MPI_COMM_WORLD, &requests[i++]),
              "MPI_Irecv");
  for (const Send& s : sends)
    check_mpi(MPI_Isend(s.data, static_cast<int>(s.bytes), MPI_BYTE, static_cast<int>(s.to_block), s.tag,
                        MPI_COMM_WORLD, &requests[i++]),
              "MPI_Isend");
  check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

template <class T>
DistributedWave<T>::DistributedWave(const Communicator& communicator, const Context& device,
                                    wave::WaveSystem<T> system, wave::PointSource source, double frequency,
                                    const std::vector<std::size_t>& receivers, std::size_t halo_steps)
    : communicator_(communicator),
      transport_(communicator),
      receiver_nodes_(receivers),
      solver_({device}, std::move(system), std::move(source), frequency, receivers,
              {{}, halo_steps, static_cast<std::size_t>(communicator.size()),
               static_cast<std::size_t>(communicator.rank()), &transport_}) {}

template <class T>
wave::WaveRun<T> DistributedWave<T>::run(std::size_t steps, const std::function<void(const wave::WaveProgress&)>& progress) {
  wave::WaveRun<T> mine = solver_.run(steps, progress);
  mine.seconds = communicator_.max(mine.seconds);
  mine.nodes_per_second = mine.seconds > 0 ? double(solver_.system().nx * solver_.system().nz) * double(steps) / mine.seconds : 0;
  const wave::DofRange owned = solver_.blocks().front();
  const std::vector<unsigned long> ranges =
      communicator_.gather(std::vector<unsigned long>{owned.first, owned.end()});
  const std::vector<T> all = communicator_.gather(mine.seismograms);
  if (communicator_.rank() != 0) return mine;
  // Receiver r's samples (steps x 2) from the rank that owns its node's DOFs.
  const std::size_t per_receiver = 2 * steps, nx = solver_.system().nx;
  for (std::size_t r = 0; r < mine.receivers; ++r) {
    const std::size_t dof = 2 * (receiver_nodes_[2 * r + 1] * nx + receiver_nodes_[2 * r]);
    std::size_t owner = 0;
    while (!(dof >= ranges[2 * owner] && dof < ranges[2 * owner + 1])) ++owner;
    std::copy_n(all.begin() + owner * mine.seismograms.size() + r * per_receiver, per_receiver,
                mine.seismograms.begin() + r * per_receiver);
  }
  return mine;
}

template std::vector<float> Communicator::gather<float>(const std::vector<float>&, int) const;
template std::vector<double> Communicator::gather<double>(const std::vector<double>&, int) const;
template std::vector<unsigned long> Communicator::gather<unsigned long>(const std::vector<unsigned long>&, int) const;
template class DistributedWave<float>;
template class DistributedWave<double>;

}  // namespace ziggurat::mpi
