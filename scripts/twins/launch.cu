// The nvcc twin of `gridsync bench launch`: an empty kernel of one block of 32 threads,
// launched through the CUDA runtime. Three medians over TRIALS trials after a warm-up of
// LAUNCHES launches, as gridsync measures them:
//   host cost per launch: LAUNCHES back-to-back launches, host wall time / LAUNCHES;
//   launch + synchronize: one launch and cudaDeviceSynchronize;
//   event-timed kernel:   events recorded around one launch.
//
//   nvcc -O3 -arch=sm_90 -o launch launch.cu && ./launch [LAUNCHES] [TRIALS]
#include "twin.cuh"

__global__ void empty() {}

int main(int argc, char** argv) {
    int launches = argc > 1 ? std::atoi(argv[1]) : 2000;
    int trials = argc > 2 ? std::atoi(argv[2]) : 50;
    if (launches <= 0 || trials <= 0) {
        std::fprintf(stderr, "launches and trials must be positive\n");
        return 2;
    }
    // Warm-up: context, module, first-launch setup, clocks.
    for (int i = 0; i < launches; ++i) empty<<<1, 32>>>();
    TWIN_CHECK(cudaGetLastError());
    TWIN_CHECK(cudaDeviceSynchronize());

    std::vector<double> host, round_trip, event;
    for (int t = 0; t < trials; ++t) {
        double us = twin::host_us([&] {
            for (int i = 0; i < launches; ++i) empty<<<1, 32>>>();
        });
        host.push_back(us / launches);
        TWIN_CHECK(cudaGetLastError());
        TWIN_CHECK(cudaDeviceSynchronize());
    }
    for (int t = 0; t < trials; ++t) {
        round_trip.push_back(twin::host_us([&] {
            empty<<<1, 32>>>();
            TWIN_CHECK(cudaDeviceSynchronize());
        }));
    }
    for (int t = 0; t < trials; ++t) {
        event.push_back(1e3 * twin::event_ms([&] { empty<<<1, 32>>>(); }));
    }
    std::printf(
        "{\"twin\": \"launch\", \"device\": \"%s\", \"host_us_per_launch\": %.3f, "
        "\"launch_sync_us\": %.3f, \"event_timed_kernel_us\": %.3f}\n",
        twin::device_name(), twin::median(host), twin::median(round_trip), twin::median(event));
    return 0;
}
