// The nvcc twins of the cell list's first and third phases for a 2-D sheet in an open box —
// what `gridsync bench neighbor` times on graphene — `cell_bin_f32` and `cell_scatter_f32`
// (gpu/src/lessons/neighbor/cells.rs):
//
// - bin: one thread per atom (a grid-stride loop), `x`, `y` read through the read-only path
//   (`__ldg`, as gridsync's `ldg`), the cell along each axis from `(v - origin) * inv_size`
//   converted with saturation and clamped to the last cell, `cell[i]` = the key, `rank[i]` =
//   `atomicAdd(&counts[key], 1)`'s result (device scope, relaxed, as `atomic_add_device`);
// - scatter: one thread per atom, `p = start[cell[i]] + rank[i]` (plain loads), skipped when
//   `p >= n`, then `index[p] = i`, `x`, `y` copied to `sx[p]`, `sy[p]`.
//
// The harness bins the sheet on the host the way gridsync's `CellPlan` does (as cell_count.cu),
// runs the bin once to check it (every cell's count equal to the host's, and the ranks of each
// cell's atoms a permutation of 0..count), scans its counts on the host into the starts, runs
// the scatter once to check it (every position written once, with its atom's coordinates, in
// its cell's range), then times each kernel alone: 3 warm-ups, then TRIALS event-timed launches
// of a full grid of 256-thread blocks (the bin's counts cleared before each, outside the
// timing), the medians.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o cell_bin_scatter cell_bin_scatter.cu -lcuda
//   gridsync neighbor --len 1000000 --write-xy sheet.txt --all-pairs-max-atoms 0
//   ./cell_bin_scatter sheet.txt [TRIALS]
//   GRIDSYNC_PTX=gpu_sm_90.ptx ./cell_bin_scatter sheet.txt [TRIALS]
//
// With GRIDSYNC_PTX (gridsync's PTX, target/<profile>/build/gridsync-*/out/gpu_sm_90.ptx), the
// swap: gridsync's own `cell_scatter_f32`, loaded through the driver API, runs on this harness's
// buffers, is checked to write exactly what the twin wrote, and is timed alternately with the
// twin, launch by launch (one more JSON line) — what is left between the two is then the code's.
//
// Beside it, the Rust kernels' times alone, the same way on both sides (ncu flushes the caches
// before each kernel): `ncu --metrics gpu__time_duration.sum -k regex:"cell_bin|cell_scatter"
// gridsync neighbor --input sheet.txt --all-pairs-max-atoms 0`, and the twin under the same
// `ncu -k regex:twin`.
#include <cuda.h>

#include <cstring>

#include "device.cuh"
#include "sheet.cuh"
#include "twin.cuh"

using namespace twin;

constexpr unsigned THREADS_PER_BLOCK = 256;


__global__ void cell_bin_twin(const float* x, const float* y, unsigned n, Grid grid,
                              unsigned* cell, unsigned* rank, unsigned* counts) {
    for (size_t i = global_id_x(); i < n; i += threads_per_grid_x()) {
        unsigned cx = cell_of(__ldg(x + i), grid.origin[0], grid.inv_size[0], grid.cells[0]);
        unsigned cy = cell_of(__ldg(y + i), grid.origin[1], grid.inv_size[1], grid.cells[1]);
        size_t key = size_t(cy) * grid.cells[0] + cx;
        cell[i] = unsigned(key);
        rank[i] = atomicAdd(counts + key, 1u);
    }
}

__global__ void cell_scatter_twin(const float* x, const float* y, unsigned n,
                                  const unsigned* cell, const unsigned* rank,
                                  const unsigned* start, unsigned* index, float* sx, float* sy) {
    for (size_t i = global_id_x(); i < n; i += threads_per_grid_x()) {
        size_t p = start[cell[i]] + rank[i];
        if (p >= n) continue;
        float xv = __ldg(x + i), yv = __ldg(y + i);
        index[p] = unsigned(i);
        sx[p] = xv;
        sy[p] = yv;
    }
}

// The driver API's result, or exit with its name.
static void cu_check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) {
        const char* name = nullptr;
        cuGetErrorName(r, &name);
        std::fprintf(stderr, "%s: %s\n", what, name ? name : "unknown error");
        std::exit(1);
    }
}

// gridsync's `Atoms<f32>` and `Sorted<f32>` (`#[repr(C)]`): the Rust kernel's struct arguments.
struct RustAtoms {
    const float* x;
    const float* y;
    const float* z;
};
struct RustSorted {
    unsigned* index;
    float* x;
    float* y;
    float* z;
};

// Loads gridsync's PTX (the file at `path`), runs its cell_scatter_f32 and `twin` once each on
// the buffers and checks they write the same, then times them alternately, TRIALS each after 3
// warm-ups, and prints both medians as one JSON line.
template <class Twin>
static int swap_scatter(const char* path, float* dx, float* dy, unsigned n, unsigned* dcell,
                        unsigned* drank, unsigned* dstart, unsigned* dindex, float* dsx,
                        float* dsy, unsigned blocks, Twin twin, int trials) {
    FILE* f = std::fopen(path, "rb");
    if (!f) {
        std::fprintf(stderr, "cannot read %s\n", path);
        return 2;
    }
    std::vector<char> text;
    char chunk[1 << 16];
    for (size_t got; (got = std::fread(chunk, 1, sizeof chunk, f)) > 0;)
        text.insert(text.end(), chunk, chunk + got);
    std::fclose(f);
    text.push_back('\0');
    CUmodule module;
    CUfunction kernel;
    cu_check(cuModuleLoadData(&module, text.data()), "cuModuleLoadData");
    cu_check(cuModuleGetFunction(&kernel, module, "cell_scatter_f32"), "cell_scatter_f32");
    RustAtoms atoms{dx, dy, nullptr};
    RustSorted sorted{dindex, dsx, dsy, nullptr};
    void* params[] = {&atoms, &n, &dcell, &drank, &dstart, &sorted};
    auto rust = [&] {
        cu_check(cuLaunchKernel(kernel, blocks, 1, 1, THREADS_PER_BLOCK, 1, 1, 0, nullptr, params,
                                nullptr),
                 "cuLaunchKernel");
    };
    // Each side's output from the same ranks (the timed bins above drew new ones).
    auto written = [&](auto launch, std::vector<unsigned>& index, std::vector<float>& sx,
                       std::vector<float>& sy) {
        // Every output cleared first (NaN coordinates), so that what is compared was written.
        TWIN_CHECK(cudaMemset(dindex, 0xff, size_t(n) * 4));
        TWIN_CHECK(cudaMemset(dsx, 0xff, size_t(n) * 4));
        TWIN_CHECK(cudaMemset(dsy, 0xff, size_t(n) * 4));
        launch();
        TWIN_CHECK(cudaDeviceSynchronize());
        index.resize(n), sx.resize(n), sy.resize(n);
        TWIN_CHECK(cudaMemcpy(index.data(), dindex, size_t(n) * 4, cudaMemcpyDeviceToHost));
        TWIN_CHECK(cudaMemcpy(sx.data(), dsx, size_t(n) * 4, cudaMemcpyDeviceToHost));
        TWIN_CHECK(cudaMemcpy(sy.data(), dsy, size_t(n) * 4, cudaMemcpyDeviceToHost));
    };
    std::vector<unsigned> index, got;
    std::vector<float> sx, sy, gx, gy;
    written(twin, index, sx, sy);
    written(rust, got, gx, gy);
    if (got != index || std::memcmp(gx.data(), sx.data(), size_t(n) * 4) != 0 ||
        std::memcmp(gy.data(), sy.data(), size_t(n) * 4) != 0) {
        std::fprintf(stderr, "gridsync's cell_scatter_f32 wrote other positions or coordinates "
                             "than the twin\n");
        return 1;
    }
    std::vector<double> rust_ms, twin_ms;
    for (int t = -3; t < trials; ++t) {
        double r = event_ms(rust);
        double w = event_ms(twin);
        if (t >= 0) rust_ms.push_back(r), twin_ms.push_back(w);
    }
    cu_check(cuModuleUnload(module), "cuModuleUnload");
    std::printf("{\"swap\":\"cell_scatter_f32\",\"device\":\"%s\",\"atoms\":%u,"
                "\"rust_median_ms\":%.5f,\"twin_median_ms\":%.5f}\n",
                device_name(), n, median(rust_ms), median(twin_ms));
    return 0;
}

int main(int argc, char** argv) {
    SheetInput in;
    if (int status = read_input(argc, argv, in)) return status;
    const Grid& grid = in.grid;
    size_t n = in.x.size();
    std::vector<unsigned> key(n), want(in.cells, 0);
    for (size_t i = 0; i < n; ++i) {
        unsigned cx = cell_of(in.x[i], grid.origin[0], grid.inv_size[0], grid.cells[0]);
        unsigned cy = cell_of(in.y[i], grid.origin[1], grid.inv_size[1], grid.cells[1]);
        key[i] = cy * grid.cells[0] + cx;
        ++want[key[i]];
    }

    float *dx, *dy, *dsx, *dsy;
    unsigned *dcell, *drank, *dcounts, *dstart, *dindex;
    TWIN_CHECK(cudaMalloc(&dx, n * 4));
    TWIN_CHECK(cudaMalloc(&dy, n * 4));
    TWIN_CHECK(cudaMalloc(&dsx, n * 4));
    TWIN_CHECK(cudaMalloc(&dsy, n * 4));
    TWIN_CHECK(cudaMalloc(&dcell, n * 4));
    TWIN_CHECK(cudaMalloc(&drank, n * 4));
    TWIN_CHECK(cudaMalloc(&dindex, n * 4));
    TWIN_CHECK(cudaMalloc(&dcounts, in.cells * 4));
    TWIN_CHECK(cudaMalloc(&dstart, (in.cells + 1) * 4));
    TWIN_CHECK(cudaMemcpy(dx, in.x.data(), n * 4, cudaMemcpyHostToDevice));
    TWIN_CHECK(cudaMemcpy(dy, in.y.data(), n * 4, cudaMemcpyHostToDevice));
    unsigned blocks = unsigned((n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK);
    auto bin = [&] {
        cell_bin_twin<<<blocks, THREADS_PER_BLOCK>>>(dx, dy, unsigned(n), grid, dcell, drank,
                                                      dcounts);
    };
    auto scatter = [&] {
        cell_scatter_twin<<<blocks, THREADS_PER_BLOCK>>>(dx, dy, unsigned(n), dcell, drank,
                                                          dstart, dindex, dsx, dsy);
    };

    // The bin, checked: the counts, the keys, and each cell's ranks 0..count once each.
    TWIN_CHECK(cudaMemset(dcounts, 0, in.cells * 4));
    bin();
    TWIN_CHECK(cudaGetLastError());
    std::vector<unsigned> counts(in.cells), cell(n), rank(n);
    TWIN_CHECK(cudaMemcpy(counts.data(), dcounts, in.cells * 4, cudaMemcpyDeviceToHost));
    TWIN_CHECK(cudaMemcpy(cell.data(), dcell, n * 4, cudaMemcpyDeviceToHost));
    TWIN_CHECK(cudaMemcpy(rank.data(), drank, n * 4, cudaMemcpyDeviceToHost));
    std::vector<unsigned> start(in.cells + 1, 0);
    for (size_t k = 0; k < in.cells; ++k) start[k + 1] = start[k] + want[k];
    size_t bad = 0;
    for (size_t k = 0; k < in.cells; ++k) bad += counts[k] != want[k];
    std::vector<unsigned char> seen(n, 0);
    for (size_t i = 0; i < n; ++i) {
        if (cell[i] != key[i] || rank[i] >= want[key[i]]) {
            ++bad;
            continue;
        }
        unsigned char& s = seen[start[key[i]] + rank[i]];
        bad += s;
        s = 1;
    }
    if (bad != 0) {
        std::fprintf(stderr, "cell_bin_twin: %zu counts or ranks differ from the host's\n", bad);
        return 1;
    }

    // The scatter, checked: every position once, its atom's coordinates, inside its cell.
    TWIN_CHECK(cudaMemcpy(dstart, start.data(), (in.cells + 1) * 4, cudaMemcpyHostToDevice));
    scatter();
    TWIN_CHECK(cudaGetLastError());
    std::vector<unsigned> index(n);
    std::vector<float> sx(n), sy(n);
    TWIN_CHECK(cudaMemcpy(index.data(), dindex, n * 4, cudaMemcpyDeviceToHost));
    TWIN_CHECK(cudaMemcpy(sx.data(), dsx, n * 4, cudaMemcpyDeviceToHost));
    TWIN_CHECK(cudaMemcpy(sy.data(), dsy, n * 4, cudaMemcpyDeviceToHost));
    std::fill(seen.begin(), seen.end(), 0);
    for (size_t k = 0; k < in.cells; ++k) {
        for (unsigned p = start[k]; p < start[k + 1]; ++p) {
            unsigned i = index[p];
            if (i >= n || seen[i] || key[i] != k || sx[p] != in.x[i] || sy[p] != in.y[i]) {
                ++bad;
                continue;
            }
            seen[i] = 1;
        }
    }
    if (bad != 0) {
        std::fprintf(stderr, "cell_scatter_twin: %zu positions differ from the host's\n", bad);
        return 1;
    }

    // Timed alone. The bin's counts are cleared before each launch, outside its events; the
    // scatter rewrites the same positions each time.
    std::vector<double> bin_ms, scatter_ms;
    for (int t = -3; t < in.trials; ++t) {
        TWIN_CHECK(cudaMemset(dcounts, 0, in.cells * 4));
        double b = event_ms(bin);
        double s = event_ms(scatter);
        if (t >= 0) bin_ms.push_back(b), scatter_ms.push_back(s);
    }
    TWIN_CHECK(cudaDeviceSynchronize());
    if (const char* ptx = std::getenv("GRIDSYNC_PTX")) {
        // gridsync's own cell_scatter_f32, from its PTX, on this harness's buffers: the two
        // kernels alternated launch by launch, so that a difference left between them is the
        // code's, not the process's, the data's or the buffers'.
        if (int status = swap_scatter(ptx, dx, dy, unsigned(n), dcell, drank, dstart, dindex,
                                      dsx, dsy, blocks, scatter, in.trials))
            return status;
    }
    std::printf("{\"twin\":\"cell_bin_f32+cell_scatter_f32\",\"device\":\"%s\",\"atoms\":%zu,"
                "\"cells\":%llu,\"blocks\":%u,\"bin_median_ms\":%.5f,"
                "\"scatter_median_ms\":%.5f}\n",
                device_name(), n, in.cells, blocks, median(bin_ms), median(scatter_ms));
    return 0;
}
