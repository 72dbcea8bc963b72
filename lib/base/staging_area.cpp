#include "base/staging_area.hpp"

#include <map>

#include "ziggurat/base/error.hpp"

namespace ziggurat::detail {

namespace {

// The areas of the live Contexts, by OpenCL context. Never destroyed: an area may go with a
// Context after the library's static objects have.
struct Areas {
  std::mutex mutex;
  std::map<cl_context, std::weak_ptr<StagingArea>> by_context;
};

Areas& areas() {
  static Areas* const all = new Areas;
  return *all;
}

}  // namespace

Staging::Staging(const cl::CommandQueue& q, const cl::Context& context) : queue(q) {
  cl_int err = CL_SUCCESS;
  buffer = cl::Buffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, kStagingChunk, nullptr, &err);
  check(err, "clCreateBuffer", "allocating a pinned staging buffer for a large upload");
  data = static_cast<char*>(
      queue.enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, kStagingChunk, nullptr, nullptr, &err));
  check(err, "clEnqueueMapBuffer", "mapping a pinned staging buffer");
}

Staging::~Staging() {
  // Errors cannot be reported from a destructor; the buffer is released either way.
  if (written() != nullptr) written.wait();
  if (queue.enqueueUnmapMemObject(buffer, data) == CL_SUCCESS) queue.finish();
}

StagingArea::~StagingArea() {
  Areas& all = areas();
  const std::lock_guard<std::mutex> lock(all.mutex);
  const auto found = all.by_context.find(context_());
  if (found != all.by_context.end() && found->second.expired()) all.by_context.erase(found);
}

std::pair<Staging*, Staging*> StagingArea::buffers(const cl::CommandQueue& queue) {
  if (!first_) {
    first_.emplace(queue, context_);
    second_.emplace(queue, context_);
  }
  return {&*first_, &*second_};
}

std::shared_ptr<StagingArea> keep_staging_area(const cl::Context& context) {
  auto area = std::make_shared<StagingArea>(context);
  Areas& all = areas();
  const std::lock_guard<std::mutex> lock(all.mutex);
  all.by_context[context()] = area;
  return area;
}

std::shared_ptr<StagingArea> kept_staging_area(const cl::Context& context) {
  Areas& all = areas();
  const std::lock_guard<std::mutex> lock(all.mutex);
  const auto found = all.by_context.find(context());
  return found == all.by_context.end() ? nullptr : found->second.lock();
}

}  // namespace ziggurat::detail
