// What a user's program looks like: select a device, run an own kernel and a library solver.

#include <ziggurat/ziggurat.hpp>

#include <iostream>
#include <vector>

int main() {
  try {
    ziggurat::Context context;  // ZIGGURAT_DEVICE, else the first GPU, else the first CPU

    const char* source = "__kernel void twice(__global float* x) { x[get_global_id(0)] *= 2.0f; }";
    std::vector<float> values = {1, 2, 3, 4};
    ziggurat::DeviceBuffer<float> buffer(context, values.size());
    ziggurat::copy_to_device(context.upload_queue(), values.data(), buffer);
    cl::Kernel twice = context.kernel(context.program_from_source("twice", source), "twice");
    ziggurat::check(twice.setArg(0, buffer.get()), "clSetKernelArg");
    ziggurat::check(context.compute_queue().enqueueNDRangeKernel(twice, cl::NullRange, cl::NDRange(values.size())),
                    "clEnqueueNDRangeKernel");
    ziggurat::copy_to_host(context.compute_queue(), buffer, values.data());

    ziggurat::InDeviceHeat<float> heat(context, ziggurat::heat_mode_field<float>({32, 32}), 0.25);
    heat.advance(10);
    const float centre = heat.read()(16, 16);

    // [2 1; 0 3] times the two vectors (1, 1) and (1, -1), stored interleaved.
    ziggurat::sparse::Csr<float> a;
    a.rows = a.cols = 2;
    a.row_ptr = {0, 2, 3};
    a.col = {0, 1, 1};
    a.values = {2, 1, 3};
    const ziggurat::sparse::DeviceBsr<float> device_a(context, ziggurat::sparse::to_bsr(a, 2));
    const std::vector<float> y = ziggurat::sparse::multiply(context, device_a, {1, 1, 1, -1}, 2,
                                                            {ziggurat::sparse::BsrStrategy::multirow});

    if (values != std::vector<float>{2, 4, 6, 8} || !(centre > 0.0f && centre < 1.0f) ||
        y != std::vector<float>{3, 1, 3, -3}) {
      std::cerr << "downstream: wrong results on " << context.device().label() << "\n";
      return 1;
    }
    std::cout << "downstream: ziggurat " << ziggurat::version << " ran a kernel on " << context.device().label()
              << "\n";
  } catch (const ziggurat::Error& error) {
    std::cerr << "downstream: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
