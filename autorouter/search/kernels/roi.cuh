// What both search kernels share: the padded batch layout, the constants they need, and each ROI's best path walked
// back from the final distances. A ROI sits in the corner of its (L, H, W) box; the box's padding is BLOCKED32 and
// unreached.

#pragma once
#include <cooperative_groups.h>

// BLOCKED, BLOCKED32, UNREACHED and NO_PARENT come from autorouter/search/constants.py as -D options (gpu.py).
#if !defined(BLOCKED) || !defined(BLOCKED32) || !defined(UNREACHED) || !defined(NO_PARENT)
#error "compile with the -D options of autorouter.search.constants.cuda_defines"
#endif

typedef long long i64;
typedef int cost_t;

// The parent of node v (at l, r, c of ROI k's padded box): the lowest ROI-local index among the neighbours u with
// d[u] + (cost of entering v from u) == d[v], or NO_PARENT. base = k * L * H * W; h, w: the ROI's own rows and cols.
__device__ long long parent_of(const i64* d, const cost_t* cost_col, const cost_t* cost_row, const cost_t* cost_via,
                               long long base, int l, int r, int c, int L, int H, int W, long long h, long long w) {
    long long v = base + ((long long)l * H + r) * W + c;
    i64 dv = d[v];
    long long best = NO_PARENT;
    int nl[6] = {l, l, l, l, l - 1, l + 1}, nr[6] = {r, r, r - 1, r + 1, r, r}, nc[6] = {c - 1, c + 1, c, c, c, c};
    const cost_t* costs[6] = {cost_col, cost_col, cost_row, cost_row, cost_via, cost_via};
    for (int m = 0; m < 6; m++) {
        if (nl[m] < 0 || nl[m] >= L || nr[m] < 0 || nr[m] >= H || nc[m] < 0 || nc[m] >= W) continue;
        cost_t cost = costs[m][v];
        if (cost == BLOCKED32) continue;
        i64 du = d[base + ((long long)nl[m] * H + nr[m]) * W + nc[m]];
        if (du < UNREACHED && du + cost == dv) {
            long long local = ((long long)nl[m] * h + nr[m]) * w + nc[m];
            if (local < best) best = local;
        }
    }
    return best;
}

// ROI k's sink with the lowest distance plus stub cost as d stands (lowest position on ties): its total
// (0x7FFFFFFFFFFFFFFF where no sink is reached), and its position among the ROI's sinks in *pick (-1: none).
__device__ i64 best_sink(int k, const i64* d, const long long* dims, const long long* sinks, const i64* sink_cost,
                         const long long* sink_start, int L, int H, int W, long long* pick) {
    long long base = k * (long long)L * H * W;
    long long h = dims[3 * k + 1], w = dims[3 * k + 2];
    i64 best = 0x7FFFFFFFFFFFFFFFLL;
    *pick = -1;
    for (long long s = sink_start[k]; s < sink_start[k + 1]; s++) {
        long long local = sinks[s];
        long long lay = local / (h * w), rr = (local / w) % h, cc = local % w;
        i64 dv = d[base + (lay * H + rr) * W + cc];
        if (dv >= UNREACHED) continue;
        i64 t = dv + sink_cost[s];
        if (t < best) { best = t; *pick = s - sink_start[k]; }
    }
    return best;
}

// ROI k's best sink (best_sink), then the path back from it through the parents, written sink first into
// path[k * L * H * W ...]. out[k], out[K + k], out[2K + k]: the path's length (0 when no sink is reached), the chosen
// sink's position, the total cost.
__device__ void best_path(int k, const i64* d, const cost_t* cost_col, const cost_t* cost_row, const cost_t* cost_via,
                          const long long* dims, const long long* sinks, const i64* sink_cost,
                          const long long* sink_start, int K, int L, int H, int W, int* path, long long* out) {
    long long per = (long long)L * H * W, base = k * per;
    long long h = dims[3 * k + 1], w = dims[3 * k + 2];
    long long pick;
    i64 best = best_sink(k, d, dims, sinks, sink_cost, sink_start, L, H, W, &pick);
    out[K + k] = pick;
    out[2 * K + k] = best;
    if (pick < 0) { out[k] = 0; return; }
    long long local = sinks[sink_start[k] + pick];
    long long n = 0;
    while (true) {
        path[base + n++] = (int)local;
        int lay = (int)(local / (h * w)), rr = (int)((local / w) % h), cc = (int)(local % w);
        long long parent = parent_of(d, cost_col, cost_row, cost_via, base, lay, rr, cc, L, H, W, h, w);
        if (parent == NO_PARENT || n >= per) break;
        local = parent;
    }
    out[k] = n;
}
