// Near-far (two-bucket delta-stepping) over a batch of K regions of interest, padded to one (K, L, H, W) box: the
// round-by-round alternative to the sweeps of sweep.cu, with the same results.
//
// Each node holds one 64-bit key, (distance << 32) | parent, lowered by atomicMin: of two updates with equal
// distance the lower parent wins, whatever order they come in. A round relaxes every frontier node of a ROI whose
// distance is below that ROI's threshold (the near bucket); a ROI with no near node either finishes (every sink
// settled below the threshold, or nothing left to reach) or raises its threshold by delta past its lowest frontier
// node. Distances must stay below 2^32.
//
// `near_far` is one persistent cooperative kernel: the rounds, their bookkeeping and the stop run on the device,
// with grid-wide syncs between phases. At the end the keys become distances and best_path (roi.cuh) walks each ROI's
// path back; the parents it finds are the keys' parents.

#include "roi.cuh"

typedef unsigned long long u64;
#define KEY_NONE 0xFFFFFFFFFFFFFFFFULL
#define NO_ROUND 0x7FFFFFFFFFFFFFFFLL

// roi: K rows of (threshold, lowest frontier distance, has frontier, has near, a sink unsettled, done), then two
// pairs of flags (some ROI has near nodes, some ROI is still going) for alternate rounds.
extern "C" __global__ void near_far(i64* d, const cost_t* cost_col, const cost_t* cost_row, const cost_t* cost_via,
                                    int K, int L, int H, int W, const long long* src, const i64* src_cost, int n_src,
                                    const long long* dims, const long long* sinks, const i64* sink_cost,
                                    const long long* sink_start, int* path, long long* state,
                                    unsigned char* frontier, unsigned char* near, long long* roi, long long delta) {
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    long long tid = grid.thread_rank(), threads = grid.size();
    long long hw = (long long)H * W, per = L * hw, total = K * per;
    u64* key = (u64*)d;
    for (long long i = tid; i < total; i += threads) { key[i] = KEY_NONE; frontier[i] = 0; near[i] = 0; }
    for (long long k = tid; k < K; k += threads) {
        long long* r = roi + 6 * k;
        r[0] = r[1] = NO_ROUND;
        r[2] = r[3] = r[4] = r[5] = 0;
    }
    if (tid < 4) roi[6 * K + tid] = 0;
    grid.sync();
    for (long long i = tid; i < n_src; i += threads) {
        if (src_cost[i] >= BLOCKED) continue;     // no source (a portal strict repair walls off): no key for it
        atomicMin(key + src[i], ((u64)src_cost[i] << 32) | NO_PARENT);
        frontier[src[i]] = 1;
        atomicMin((long long*)roi + 6 * (src[i] / per), src_cost[i]);
    }
    grid.sync();
    for (long long k = tid; k < K; k += threads)
        roi[6 * k] = (roi[6 * k] == NO_ROUND ? 0 : roi[6 * k]) + delta;
    grid.sync();
    long long rounds = 0;
    for (int it = 0;; it++) {
        volatile long long* flags = roi + 6 * K + 2 * (it & 1);
        // which frontier nodes are near, and each ROI's state
        for (long long v = tid; v < total; v += threads) {
            if (!frontier[v]) continue;
            long long* r = roi + 6 * (v / per);
            if (r[5]) { frontier[v] = 0; continue; }
            long long dist = (long long)(key[v] >> 32);
            r[2] = 1;
            if (dist < r[0]) { near[v] = 1; r[3] = 1; }
            else atomicMin(r + 1, dist);
        }
        for (long long k = tid; k < K; k += threads) {
            long long h = dims[3 * k + 1], w = dims[3 * k + 2];
            for (long long s = sink_start[k]; s < sink_start[k + 1]; s++) {
                long long local = sinks[s];
                long long lay = local / (h * w), rr = (local / w) % h, cc = local % w;
                u64 kv = key[k * per + (lay * H + rr) * W + cc];
                if (kv == KEY_NONE || (long long)(kv >> 32) >= roi[6 * k]) roi[6 * k + 4] = 1;
            }
        }
        grid.sync();
        // each ROI with nothing near finishes or raises its threshold
        for (long long k = tid; k < K; k += threads) {
            long long* r = roi + 6 * k;
            if (r[5]) continue;
            if (r[2] && !r[3]) {
                if (r[4]) r[0] = (r[1] > r[0] ? r[1] : r[0]) + delta;
                else r[5] = 1;
            }
            if (r[3]) flags[0] = 1;
            if (r[2] && !r[5]) flags[1] = 1;
            r[1] = NO_ROUND;
            r[2] = r[3] = r[4] = 0;
        }
        if (tid == 0) roi[6 * K + 2 * ((it + 1) & 1)] = roi[6 * K + 2 * ((it + 1) & 1) + 1] = 0;
        grid.sync();
        if (!flags[1]) break;
        if (flags[0]) {
            // relax the near bucket
            for (long long v = tid; v < total; v += threads) {
                if (!near[v]) continue;
                near[v] = 0;
                frontier[v] = 0;
                __threadfence();
                long long dist = (long long)(((volatile u64*)key)[v] >> 32);
                long long k = v / per, rest = v % per;
                int l = (int)(rest / hw), r = (int)((rest / W) % H), c = (int)(rest % W);
                long long h = dims[3 * k + 1], w = dims[3 * k + 2];
                u64 parent = (u64)(((long long)l * h + r) * w + c);
                int nl[6] = {l, l, l, l, l - 1, l + 1}, nr[6] = {r, r, r - 1, r + 1, r, r};
                int nc[6] = {c - 1, c + 1, c, c, c, c};
                const cost_t* costs[6] = {cost_col, cost_col, cost_row, cost_row, cost_via, cost_via};
                for (int m = 0; m < 6; m++) {
                    if (nl[m] < 0 || nl[m] >= L || nr[m] < 0 || nr[m] >= H || nc[m] < 0 || nc[m] >= W) continue;
                    long long u = k * per + ((long long)nl[m] * H + nr[m]) * W + nc[m];
                    cost_t cost = costs[m][u];
                    if (cost == BLOCKED32) continue;
                    long long nd = dist + cost;
                    u64 old = atomicMin(key + u, ((u64)nd << 32) | parent);
                    if ((long long)(old >> 32) > nd) {
                        __threadfence();        // whoever clears u's flag after this store reads the new key
                        frontier[u] = 1;
                    }
                }
            }
            rounds++;
        }
        grid.sync();
    }
    if (tid == 0) state[2] = rounds;
    for (long long i = tid; i < total; i += threads) d[i] = key[i] == KEY_NONE ? UNREACHED : (i64)(key[i] >> 32);
    grid.sync();
    for (long long k = tid; k < K; k += threads)
        best_path((int)k, d, cost_col, cost_row, cost_via, dims, sinks, sink_cost, sink_start, K, L, H, W, path,
                  state + 3);
}
