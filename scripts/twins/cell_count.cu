// The nvcc twin of the cell list's count pass, `cell_count_f32` (gpu/src/lessons/neighbor/
// cells.rs), for a 2-D sheet in an open box — what `gridsync bench neighbor` times on graphene:
// one thread per sorted atom (a grid-stride loop over sorted positions), its cell from
// `(x - origin) * inv_size` converted with saturation and clamped to the last cell, the cells
// around it along each axis (one less and one more, clipped at the edges), and for each of the
// (up to) three rows of cells one range of sorted positions `start[first]..start[last + 1]`;
// each candidate `q` is a neighbor when `dx*dx + dy*dy < cutoff²` (no fused multiply-add, as
// rustc emits none) and `q != p`; the first eight found go to `kept[k * n + p]` (`Kept`), and
// the count to `counts[index[p]]`. Coordinates, starts and indices are read through the
// read-only path (`__ldg`), as gridsync's `ldg`; the stores are plain.
//
// The harness bins the sheet on the host the way gridsync's does (`CellPlan`: the bounding box
// of the f32 coordinates, cells 1.9·(1 + 1/64) Å wide or wider, a stable counting sort by cell),
// uploads the sorted coordinates, indices and starts, and times the kernel alone: 3 warm-ups,
// then TRIALS event-timed launches of a full grid of 256-thread blocks, the median. The counts
// and the kept neighbors are checked against the host's own search of the same cells, in the
// same f32 operations.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -fmad=false -Xcompiler -ffp-contract=off \
//        -o cell_count cell_count.cu
//   gridsync neighbor --len 1000000 --write-xy sheet.txt --all-pairs-max-atoms 0
//   ./cell_count sheet.txt [TRIALS]
//
// Beside it, the Rust kernel's time alone: `ncu --metrics gpu__time_duration.sum -k
// cell_count_f32 gridsync neighbor --len 1000000 --all-pairs-max-atoms 0` (its SASS: run.sh's
// way, ptxas on gridsync's sm_90 PTX, entry cell_count_f32).
#include "device.cuh"
#include "sheet.cuh"
#include "twin.cuh"

using namespace twin;

constexpr unsigned THREADS_PER_BLOCK = 256;
constexpr unsigned KEEP = 8;


// CellGrid::around for an open box: (first, count).
__host__ __device__ __forceinline__ void around(unsigned c, unsigned n, unsigned* first,
                                                unsigned* count) {
    if (n < 3) {
        *first = 0;
        *count = n;
    } else {
        unsigned lo = c > 0 ? c - 1 : 0;
        unsigned hi = c + 1 < n - 1 ? c + 1 : n - 1;
        *first = lo;
        *count = hi - lo + 1;
    }
}

__global__ void cell_count_twin(const float* x, const float* y, const unsigned* index,
                                unsigned n, const unsigned* start, Grid grid, float cutoff_sq,
                                unsigned* counts, unsigned* kept) {
    for (size_t p = global_id_x(); p < n; p += threads_per_grid_x()) {
        float mx = __ldg(x + p), my = __ldg(y + p);
        unsigned cx = cell_of(mx, grid.origin[0], grid.inv_size[0], grid.cells[0]);
        unsigned cy = cell_of(my, grid.origin[1], grid.inv_size[1], grid.cells[1]);
        unsigned x0, nx_around, y0, ny_around;
        around(cy, grid.cells[1], &y0, &ny_around);
        around(cx, grid.cells[0], &x0, &nx_around);
        unsigned found = 0;
        unsigned* slot = kept + p;
        for (unsigned dy = 0; dy < ny_around; ++dy) {
            unsigned row = (y0 + dy) * grid.cells[0];
            unsigned from = __ldg(start + row + x0), to = __ldg(start + row + x0 + nx_around);
            for (unsigned q = from; q < to; ++q) {
                float dxv = __ldg(x + q) - mx, dyv = __ldg(y + q) - my;
                float d2 = __fadd_rn(__fmul_rn(dxv, dxv), __fmul_rn(dyv, dyv));
                if (d2 < cutoff_sq && q != p) {
                    if (found < KEEP) {
                        *slot = __ldg(index + q);
                        slot += n;
                    }
                    ++found;
                }
            }
        }
        counts[index[p]] = found;
    }
}

int main(int argc, char** argv) {
    SheetInput in;
    if (int status = read_input(argc, argv, in)) return status;
    const Grid& grid = in.grid;
    size_t n = in.x.size();
    // Stable counting sort by cell key.
    std::vector<unsigned> key(n), start(in.cells + 1, 0), index(n);
    for (size_t i = 0; i < n; ++i) {
        unsigned cx = cell_of(in.x[i], grid.origin[0], grid.inv_size[0], grid.cells[0]);
        unsigned cy = cell_of(in.y[i], grid.origin[1], grid.inv_size[1], grid.cells[1]);
        key[i] = cy * grid.cells[0] + cx;
        ++start[key[i] + 1];
    }
    for (size_t k = 1; k <= in.cells; ++k) start[k] += start[k - 1];
    {
        std::vector<unsigned> next(start.begin(), start.end() - 1);
        for (size_t i = 0; i < n; ++i) index[next[key[i]]++] = unsigned(i);
    }
    std::vector<float> sx(n), sy(n);
    for (size_t p = 0; p < n; ++p) sx[p] = in.x[index[p]], sy[p] = in.y[index[p]];
    float cutoff_sq = float(CUTOFF * CUTOFF);

    float *dx, *dy;
    unsigned *dindex, *dstart, *dcounts, *dkept;
    TWIN_CHECK(cudaMalloc(&dx, n * 4));
    TWIN_CHECK(cudaMalloc(&dy, n * 4));
    TWIN_CHECK(cudaMalloc(&dindex, n * 4));
    TWIN_CHECK(cudaMalloc(&dstart, (in.cells + 1) * 4));
    TWIN_CHECK(cudaMalloc(&dcounts, n * 4));
    TWIN_CHECK(cudaMalloc(&dkept, n * 4 * KEEP));
    TWIN_CHECK(cudaMemcpy(dx, sx.data(), n * 4, cudaMemcpyHostToDevice));
    TWIN_CHECK(cudaMemcpy(dy, sy.data(), n * 4, cudaMemcpyHostToDevice));
    TWIN_CHECK(cudaMemcpy(dindex, index.data(), n * 4, cudaMemcpyHostToDevice));
    TWIN_CHECK(cudaMemcpy(dstart, start.data(), (in.cells + 1) * 4, cudaMemcpyHostToDevice));
    unsigned blocks = unsigned((n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK);
    auto launch = [&] {
        cell_count_twin<<<blocks, THREADS_PER_BLOCK>>>(dx, dy, dindex, unsigned(n), dstart, grid,
                                                        cutoff_sq, dcounts, dkept);
    };
    for (int w = 0; w < 3; ++w) launch();
    TWIN_CHECK(cudaGetLastError());
    std::vector<double> ms;
    for (int t = 0; t < in.trials; ++t) ms.push_back(event_ms(launch));
    TWIN_CHECK(cudaDeviceSynchronize());

    // The host's search of the same cells, in the same f32 operations.
    std::vector<unsigned> counts(n), kept(n * KEEP);
    TWIN_CHECK(cudaMemcpy(counts.data(), dcounts, n * 4, cudaMemcpyDeviceToHost));
    TWIN_CHECK(cudaMemcpy(kept.data(), dkept, n * 4 * KEEP, cudaMemcpyDeviceToHost));
    size_t bad = 0, entries = 0;
    for (size_t p = 0; p < n; ++p) {
        unsigned cx = cell_of(sx[p], grid.origin[0], grid.inv_size[0], grid.cells[0]);
        unsigned cy = cell_of(sy[p], grid.origin[1], grid.inv_size[1], grid.cells[1]);
        unsigned x0, nxa, y0, nya, found = 0;
        around(cy, grid.cells[1], &y0, &nya);
        around(cx, grid.cells[0], &x0, &nxa);
        bool ok = true;
        for (unsigned r = 0; r < nya; ++r) {
            unsigned row = (y0 + r) * grid.cells[0];
            for (unsigned q = start[row + x0]; q < start[row + x0 + nxa]; ++q) {
                volatile float dxv = sx[q] - sx[p], dyv = sy[q] - sy[p];
                volatile float a = dxv * dxv, b = dyv * dyv;
                volatile float d2 = a + b;
                if (d2 < cutoff_sq && q != p) {
                    if (found < KEEP) ok = ok && kept[found * n + p] == index[q];
                    ++found;
                }
            }
        }
        entries += found;
        if (!ok || counts[index[p]] != found) ++bad;
    }
    if (bad != 0) {
        std::fprintf(stderr, "cell_count_twin: %zu of %zu atoms differ from the host's search\n",
                     bad, n);
        return 1;
    }
    std::printf("{\"twin\":\"cell_count_f32\",\"device\":\"%s\",\"atoms\":%zu,\"cells\":%llu,"
                "\"entries\":%zu,\"blocks\":%u,\"median_ms\":%.5f}\n",
                device_name(), n, in.cells, entries, blocks, median(ms));
    return 0;
}
