// What the cell list's twins share (cell_count.cu, cell_bin_scatter.cu, cell_fill_scan.cu):
// their command line, the sheet read from `gridsync neighbor --write-xy` (the atom count on the
// first line, then `x y` per line), and the cell grid of gridsync's `CellPlan` over it — the
// bounding box of the f32 coordinates in f64, cells 1.9·(1 + 1/64) Å wide or wider — with the
// cell of a coordinate as the kernels compute it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace twin {

constexpr double CUTOFF = 1.9;
constexpr double CELL_MARGIN = 1.0 / 64.0;
// Timed launches by default.
constexpr int SHEET_TRIALS = 20;

struct Grid {
    float origin[2];
    float inv_size[2];
    unsigned cells[2];
};

// `(v - origin) * inv` converted with saturation (NaN and negatives to 0) and clamped to the
// last cell, as gridsync's `Coord::cell`.
__host__ __device__ __forceinline__ unsigned cell_of(float v, float origin, float inv,
                                                     unsigned cells) {
    float u = (v - origin) * inv;
#ifdef __CUDA_ARCH__
    unsigned c = __float2uint_rz(u);
#else
    unsigned c = !(u > 0.0f) ? 0u : u >= 4294967296.0f ? 0xffffffffu : unsigned(u);
#endif
    return c < cells - 1 ? c : cells - 1;
}

// The command line of the cell list's twins, `xy.txt [TRIALS]`: the sheet is argv[1], TRIALS
// (SHEET_TRIALS if absent) goes to `trials`. False (with the usage or the reason) unless there
// is a sheet and TRIALS is at least 1.
inline bool sheet_arguments(int argc, char** argv, int& trials) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s xy.txt [TRIALS]\n", argv[0]);
        return false;
    }
    trials = argc > 2 ? std::atoi(argv[2]) : SHEET_TRIALS;
    if (trials < 1) {
        std::fprintf(stderr, "TRIALS must be at least 1\n");
        return false;
    }
    return true;
}

// Reads the sheet at `path` into `x`, `y`; false (with a message) if it is malformed.
inline bool read_sheet(const char* path, std::vector<float>& x, std::vector<float>& y) {
    std::ifstream in(path);
    size_t n = 0;
    if (!(in >> n) || n == 0 || n > 0xfffffffeu) {
        std::fprintf(stderr, "%s: expected an atom count from 1 to 2^32 - 2 on the first line\n",
                     path);
        return false;
    }
    x.resize(n);
    y.resize(n);
    std::string line;
    std::getline(in, line);
    for (size_t i = 0; i < n; ++i) {
        double xv, yv;
        if (!std::getline(in, line) || std::sscanf(line.c_str(), "%lf %lf", &xv, &yv) != 2) {
            std::fprintf(stderr, "%s: line %zu is not `x y`\n", path, i + 2);
            return false;
        }
        x[i] = float(xv);
        y[i] = float(yv);
    }
    return true;
}

// `CellPlan`'s grid over the sheet; its number of cells in `total_cells`. False (with a
// message) where gridsync would halve the cells (more than two per atom): not twinned.
inline bool plan_grid(const std::vector<float>& x, const std::vector<float>& y, Grid& grid,
                      unsigned long long& total_cells) {
    size_t n = x.size();
    double lo[2] = {x[0], y[0]}, hi[2] = {x[0], y[0]};
    for (size_t i = 0; i < n; ++i) {
        lo[0] = std::min(lo[0], double(x[i])), hi[0] = std::max(hi[0], double(x[i]));
        lo[1] = std::min(lo[1], double(y[i])), hi[1] = std::max(hi[1], double(y[i]));
    }
    total_cells = 1;
    for (int a = 0; a < 2; ++a) {
        double extent = hi[a] - lo[a], width = CUTOFF * (1.0 + CELL_MARGIN);
        unsigned long long c = (unsigned long long)std::floor(extent / width);
        c = std::max(1ull, std::min(c, 1ull << 20));
        grid.cells[a] = unsigned(c);
        grid.origin[a] = float(lo[a]);
        grid.inv_size[a] = c > 1 && extent > 0 ? float(double(c) / extent) : 0.0f;
        total_cells *= c;
    }
    if (total_cells > 2 * n) {
        std::fprintf(stderr, "%llu cells for %zu atoms: gridsync would halve them; not twinned\n",
                     total_cells, n);
        return false;
    }
    return true;
}

// A cell-list twin's input: the trials and the sheet named on its command line, and `CellPlan`'s
// grid over the sheet (its number of cells in `cells`).
struct SheetInput {
    int trials = 0;
    std::vector<float> x, y;
    Grid grid{};
    unsigned long long cells = 0;
};

// Fills `in` from the command line (sheet_arguments, read_sheet, plan_grid): 0, or the status to
// exit with after a message — 2 for a bad command line, 1 for a malformed sheet or a grid not
// twinned.
inline int read_input(int argc, char** argv, SheetInput& in) {
    if (!sheet_arguments(argc, argv, in.trials)) return 2;
    if (!read_sheet(argv[1], in.x, in.y) || !plan_grid(in.x, in.y, in.grid, in.cells)) return 1;
    return 0;
}

}  // namespace twin
