// Min-plus sweeps over a batch of K regions of interest, padded to one (K, L, H, W) box.
//
// d: int64 distances, K*L*H*W. cost_col, cost_row, cost_via: int32, the price of entering a node by a move along a
// row (cost_col), a column (cost_row) or between layers (cost_via); BLOCKED32 means no such move. Padding cells are
// BLOCKED32 everywhere and start UNREACHED. Scans relax each lattice line forward then backward,
// d[i] = min(d[i], d[i-1] + cost[i]), by a warp per line, each lane a run of up to LANE_NODES nodes, with a shuffle
// scan of the min-plus recurrence over the runs; or, for lines along columns and layers in large batches, by one
// thread per line (see scan_lines).
// Sweeps repeat until no scan changes anything: the same fixed point the CPU engine reaches (both cut off past the
// best sink's total where only paths are asked for: see `sweep`). A node's parent is its
// lowest-index predecessor on a shortest path, found only along the path walked back from the best sink.
//
// `sweep` is one persistent cooperative kernel (launched with no more blocks than the device holds at once): it
// seeds the sources, repeats the sweeps with a grid-wide sync between the three scan directions, decides on the
// device when to stop, and walks back each ROI's best path. The host waits once per batch, not once per sweep.

#include "roi.cuh"

__device__ __forceinline__ int relax_line(i64* d, const cost_t* cost, int n, long long stride, i64 bound) {
    int changed = 0;
    i64 prev = d[0];
    for (int i = 1; i < n; i++) {
        cost_t c = cost[i * stride];
        i64 cur = d[i * stride];
        i64 v = prev + c;
        if (c != BLOCKED32 && v < cur && v <= bound) { cur = v; d[i * stride] = cur; changed = 1; }
        prev = cur;
    }
    prev = d[(long long)(n - 1) * stride];
    for (int i = n - 2; i >= 0; i--) {
        cost_t c = cost[i * stride];
        i64 cur = d[i * stride];
        i64 v = prev + c;
        if (c != BLOCKED32 && v < cur && v <= bound) { cur = v; d[i * stride] = cur; changed = 1; }
        prev = cur;
    }
    return changed;
}

// The min-plus step x -> min(x + a, b) as a pair (a, b); applying (a1, b1) then (a2, b2) gives
// (a1 + a2, min(b1 + a2, b2)), which is associative: a warp scans 32 steps in five shuffles.
__device__ __forceinline__ void warp_scan(i64& a, i64& b, int lane) {
    for (int o = 1; o < 32; o <<= 1) {
        i64 pa = __shfl_up_sync(0xFFFFFFFF, a, o), pb = __shfl_up_sync(0xFFFFFFFF, b, o);
        if (lane >= o) {
            i64 nb = pb + a;
            b = nb < b ? nb : b;
            a = pa + a;
            if (a > UNREACHED) a = UNREACHED;
        }
    }
}

// The most nodes of one line that a lane of a warp holds at once (scan_line_warp).
#define LANE_NODES 8

// One line of n nodes, `stride` apart, by the 32 lanes of a warp, forward then backward. Each lane holds a run of
// up to LANE_NODES consecutive nodes (a line of up to 32 * LANE_NODES nodes in one pass): it loads them all at
// once, composes their steps, the warp scans the 32 compositions, and the lane applies its run from the value that
// reaches it. One round of loads per pass instead of one per 32 nodes: a short line is latency-bound.
// Values past `bound` are not written (see `sweep`). Returns whether this lane lowered a distance.
__device__ __forceinline__ int scan_line_warp(i64* line, const cost_t* c, int n, long long stride, int lane,
                                              i64 bound) {
    int any = 0;
    int per = (n + 31) >> 5;
    if (per > LANE_NODES) per = LANE_NODES;
    for (int dir = 0; dir < 2; dir++) {
        i64 carry = UNREACHED;                         // the relaxed value just before this pass's nodes
        for (int start = 0; start < n; start += 32 * per) {
            int first = start + lane * per;
            i64 old[LANE_NODES], step[LANE_NODES];
            i64 a = 0, b = UNREACHED;                  // the run's steps composed: x -> min(x + a, b)
#pragma unroll
            for (int q = 0; q < LANE_NODES; q++) {
                int j = first + q;
                old[q] = UNREACHED;
                step[q] = 0;                           // past the line's end: x -> x
                if (q < per && j < n) {
                    long long i = (dir == 0 ? j : n - 1 - j) * stride;
                    old[q] = line[i];
                    // entering node i from the previous node in scan order costs cost[i]; the first node has none
                    cost_t ci = c[i];
                    step[q] = (j == 0 || ci == BLOCKED32) ? UNREACHED : (i64)ci;
                }
            }
#pragma unroll
            for (int q = 0; q < LANE_NODES; q++) {
                i64 nb = b + step[q];
                b = nb < old[q] ? nb : old[q];
                a += step[q];
                if (a > UNREACHED) a = UNREACHED;
            }
            warp_scan(a, b, lane);                     // now the composition of every run up to this lane's
            i64 pa = __shfl_up_sync(0xFFFFFFFF, a, 1), pb = __shfl_up_sync(0xFFFFFFFF, b, 1);
            i64 x = carry;                             // the value reaching this lane's run
            if (lane > 0) x = carry + pa < pb ? carry + pa : pb;
#pragma unroll
            for (int q = 0; q < LANE_NODES; q++) {
                int j = first + q;
                if (q < per && j < n) {
                    i64 v = x + step[q];
                    x = v < old[q] ? v : old[q];
                    if (x < old[q] && x <= bound) {
                        line[(dir == 0 ? j : n - 1 - j) * stride] = x;
                        any = 1;
                    }
                }
            }
            i64 la = __shfl_sync(0xFFFFFFFF, a, 31), lb = __shfl_sync(0xFFFFFFFF, b, 31);
            carry = carry + la < lb ? carry + la : lb;
            if (carry > UNREACHED) carry = UNREACHED;
        }
    }
    return any;
}

// Scan `lines` lines of n nodes, `stride` apart, line t starting at base_of(t): by a warp each when there are few,
// so that 32 loads are in flight instead of one chain of dependent ones (a small batch is latency-bound); by a
// thread each when there are many, where neighbouring threads read neighbouring nodes (a large batch is
// bandwidth-bound). Lines along rows (stride 1) always go by warp: that is coalesced too.
// Lines of an ROI that has settled (a whole sweep changed nothing in it: `active` says no) are skipped, and an ROI
// that changes marks `changed`: a batch costs the sweeps of its slowest ROI, but only over the ROIs still moving.
// bound: each ROI's bound (see `sweep`).
template <typename BaseOf>
__device__ __forceinline__ int scan_lines(i64* d, const cost_t* cost, long long lines, long long per_roi, int n,
                                          long long stride, BaseOf base_of, const int* active, int* changed,
                                          const volatile i64* bound, long long tid, long long threads) {
    int any = 0;
    if (stride == 1 || lines * 32 <= 4 * threads) {
        for (long long w = tid >> 5; w < lines; w += threads >> 5) {
            long long k = w / per_roi;
            if (active && !active[k]) continue;           // the whole warp holds one line: it skips together
            long long b = base_of(w);
            if (scan_line_warp(d + b, cost + b, n, stride, (int)(tid & 31), bound[k])) { any = 1; changed[k] = 1; }
        }
    } else {
        for (long long t = tid; t < lines; t += threads) {
            long long k = t / per_roi;
            if (active && !active[k]) continue;
            long long b = base_of(t);
            if (relax_line(d + b, cost + b, n, stride, bound[k])) { any = 1; changed[k] = 1; }
        }
    }
    return any;
}

// The whole search of a batch: fill, seed, sweeps until a sweep changes nothing, then each ROI's best path. Every
// loop is grid-strided, so any grid that fits on the device at once is correct. state[0], state[1]: "something
// changed" flags of alternate sweeps (zero at launch; each is cleared one phase after its last reader); state[2]:
// sweeps taken; then best_path's out (3 K values). dims: each ROI's (L, H, W); its sinks are
// sinks[sink_start[k]:sink_start[k + 1]], ROI-local. roi_changed: 3 K flags, zero at launch: sweep s marks the ROIs
// it changed in the s % 3 third, reads the (s - 1) % 3 third to skip the settled ones, and clears the (s + 1) % 3
// third, last read one sweep before and written one sweep after, each across a grid-wide sync.
// bound: K values, set to UNREACHED first. Where `bounded`, after each sweep an ROI's bound falls to its best sink's
// total so far (distance plus stub cost), and no distance past it is written: costs are not negative, so no node on
// a path to a sink at that total lies past it, and the best sink, its total and the path walked back to it are the
// exact distances' (the CPU engine's), in fewer sweeps; distances past the best total are not kept. A bound read
// while its ROI's thread lowers it is an older, larger one: still a bound.
extern "C" __global__ void sweep(i64* d, const cost_t* cost_col, const cost_t* cost_row, const cost_t* cost_via,
                                  int K, int L, int H, int W, const long long* src, const i64* src_cost, int n_src,
                                  const long long* dims, const long long* sinks, const i64* sink_cost,
                                  const long long* sink_start, int* path, long long* state, int* roi_changed,
                                  i64* bound, int bounded) {
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    long long tid = grid.thread_rank(), threads = grid.size();
    long long hw = (long long)H * W, total = (long long)K * L * hw;
    for (long long i = tid; i < total; i += threads) d[i] = UNREACHED;
    for (long long k = tid; k < K; k += threads) bound[k] = UNREACHED;
    grid.sync();
    for (long long i = tid; i < n_src; i += threads)
        if (src_cost[i] < BLOCKED)            // a source at BLOCKED is no source (a portal strict repair walls off)
            atomicMin((unsigned long long*)(d + src[i]), (unsigned long long)src_cost[i]);
    grid.sync();
    long long lines_c = (long long)K * L * H, lines_r = (long long)K * L * W, lines_l = K * hw;
    for (int s = 0;; s++) {
        volatile long long* changed = state + (s & 1);
        int* now = roi_changed + (s % 3) * K;
        const int* active = s == 0 ? nullptr : roi_changed + ((s + 2) % 3) * K;
        for (long long k = tid; k < K; k += threads) roi_changed[((s + 1) % 3) * K + k] = 0;
        int any = 0;
        if (W > 1)
            any |= scan_lines(d, cost_col, lines_c, (long long)L * H, W, 1, [=](long long t) { return t * W; },
                              active, now, bound, tid, threads);
        grid.sync();
        if (tid == 0) state[(s + 1) & 1] = 0;
        if (H > 1)
            any |= scan_lines(d, cost_row, lines_r, (long long)L * W, H, W,
                              [=](long long t) { return (t / W) * hw + t % W; }, active, now, bound, tid, threads);
        grid.sync();
        if (L > 1)
            any |= scan_lines(d, cost_via, lines_l, hw, L, hw,
                              [=](long long t) { return (t / hw) * L * hw + t % hw; }, active, now, bound, tid,
                              threads);
        if (any) *changed = 1;
        grid.sync();
        if (bounded)
            for (long long k = tid; k < K; k += threads) {
                long long pick;
                i64 best = best_sink((int)k, d, dims, sinks, sink_cost, sink_start, L, H, W, &pick);
                if (best < bound[k]) bound[k] = best;
            }
        if (*changed == 0) {
            if (tid == 0) state[2] = s + 1;
            break;
        }
    }
    for (long long k = tid; k < K; k += threads)
        best_path((int)k, d, cost_col, cost_row, cost_via, dims, sinks, sink_cost, sink_start, K, L, H, W, path,
                  state + 3);
}
