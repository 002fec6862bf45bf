// Reference lock throughput in CUDA C++ on the same GPU as `gridsync bench mutex`: libcu++'s
// binary_semaphore<thread_scope_device>, a ticket lock on cuda::atomic_ref, and the naive
// CAS spinlock with __threadfence — each thread taking the lock `iters` times around
// `++*counter`, the same work and shapes as the Rust benchmark.
//
//   nvcc -O3 -std=c++17 -arch=native scripts/reference_mutex.cu -o reference_mutex
//   ./reference_mutex            # prints one JSON object per line
#include <cuda/atomic>
#include <cuda/semaphore>
#include <algorithm>
#include <cstdio>
#include <vector>

using Sem = cuda::binary_semaphore<cuda::thread_scope_device>;

__global__ void sem_kernel(unsigned* counter, Sem* sem, unsigned iters) {
    for (unsigned i = 0; i < iters; ++i) {
        sem->acquire();
        *counter += 1;
        sem->release();
    }
}

struct Ticket { unsigned next; unsigned serving; };

__global__ void ticket_kernel(unsigned* counter, Ticket* t, unsigned iters) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> next(t->next), serving(t->serving);
    for (unsigned i = 0; i < iters; ++i) {
        unsigned my = next.fetch_add(1, cuda::memory_order_relaxed);
        while (serving.load(cuda::memory_order_acquire) != my) {
            __nanosleep((my - serving.load(cuda::memory_order_relaxed)) * 256u);
        }
        *counter += 1;
        serving.store(my + 1, cuda::memory_order_release);
    }
}

__global__ void naive_kernel(unsigned* counter, int* mutex, unsigned iters) {
    for (unsigned i = 0; i < iters; ++i) {
        while (atomicCAS(mutex, 0, 1) != 0) {}
        __threadfence();
        *counter += 1;
        __threadfence();
        atomicExch(mutex, 0);
    }
}

template <class Launch>
static void bench(const char* name, int blocks, int threads, unsigned iters, unsigned* counter,
                  Launch launch) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<float> ms;
    bool ok = true;
    for (int trial = 0; trial < 11; ++trial) {
        cudaMemset(counter, 0, 4);
        launch();
        cudaEventRecord(a);
        launch();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float t = 0;
        cudaEventElapsedTime(&t, a, b);
        unsigned got = 0;
        cudaMemcpy(&got, counter, 4, cudaMemcpyDeviceToHost);
        ok = ok && got == 2u * blocks * threads * iters;
        if (trial > 0) ms.push_back(t);
        if (t > 2000) break;
    }
    std::sort(ms.begin(), ms.end());
    float med = ms[ms.size() / 2];
    double sections = double(blocks) * threads * iters;
    printf("{\"lock\":\"%s\",\"shape\":\"%dx%d\",\"iters\":%u,\"median_ms\":%.4f,"
           "\"mega_per_s\":%.4f,\"correct\":%s}\n",
           name, blocks, threads, iters, med, sections / (med * 1e-3) / 1e6, ok ? "true" : "false");
}

int main() {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    unsigned* counter;
    Sem* sem;
    Ticket* ticket;
    int* mutex;
    cudaMalloc(&counter, 4);
    cudaMalloc(&sem, sizeof(Sem));
    cudaMalloc(&ticket, sizeof(Ticket));
    cudaMalloc(&mutex, 4);
    Sem host_sem(1);
    cudaMemcpy(sem, &host_sem, sizeof(Sem), cudaMemcpyHostToDevice);
    cudaMemset(ticket, 0, sizeof(Ticket));
    cudaMemset(mutex, 0, 4);
    const int shapes[][2] = {{128, 1}, {1, 128}, {4, 128}, {10, 16}, {sms, 256}};
    for (auto& s : shapes) {
        int blocks = s[0], threads = s[1];
        unsigned iters = std::max(1u, 32768u / unsigned(blocks * threads));
        unsigned naive_iters = std::max(1u, 65536u / unsigned(blocks * threads)) / 2;
        naive_iters = std::max(1u, std::min(iters, naive_iters));
        bench("libcu++ binary_semaphore<device>", blocks, threads, iters, counter,
              [&] { sem_kernel<<<blocks, threads>>>(counter, sem, iters); });
        bench("ticket (atomic_ref)", blocks, threads, iters, counter,
              [&] { ticket_kernel<<<blocks, threads>>>(counter, ticket, iters); });
        bench("naive CAS + threadfence", blocks, threads, naive_iters, counter,
              [&] { naive_kernel<<<blocks, threads>>>(counter, mutex, naive_iters); });
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(e)); return 1; }
    return 0;
}
