// Min-plus sweeps over a batch of K regions of interest, padded to one (K, L, H, W) box.
//
// d, cost_col, cost_row, cost_via: int64 arrays of K*L*H*W. A cost is the price of entering a node by a move along a
// row (cost_col), a column (cost_row) or between layers (cost_via); BLOCKED or more means no such move. Padding
// cells are BLOCKED everywhere and start UNREACHED. Each scan kernel gives one thread one lattice line and relaxes it
// forward then backward, d[i] = min(d[i], d[i-1] + cost[i]); sweeps repeat until no scan changes anything, which is
// the same fixed point the CPU engine reaches. Parents are then the lowest-index predecessor on a shortest path.

typedef long long i64;
#define BLOCKED (1LL << 40)
#define UNREACHED (1LL << 56)
#define NO_PARENT 0xFFFFFFFFLL

__device__ __forceinline__ int relax_line(i64* d, const i64* cost, int n, long long stride) {
    int changed = 0;
    i64 prev = d[0];
    for (int i = 1; i < n; i++) {
        i64 c = cost[i * stride], cur = d[i * stride];
        if (c < BLOCKED && prev + c < cur) { cur = prev + c; d[i * stride] = cur; changed = 1; }
        prev = cur;
    }
    prev = d[(long long)(n - 1) * stride];
    for (int i = n - 2; i >= 0; i--) {
        i64 c = cost[i * stride], cur = d[i * stride];
        if (c < BLOCKED && prev + c < cur) { cur = prev + c; d[i * stride] = cur; changed = 1; }
        prev = cur;
    }
    return changed;
}

// lines along W: one per (k, l, r)
extern "C" __global__ void scan_cols(i64* d, const i64* cost, long long lines, int W, int* changed) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= lines) return;
    if (relax_line(d + t * W, cost + t * W, W, 1)) *changed = 1;
}

// lines along H: one per (k, l, c); neighbouring threads read neighbouring columns (coalesced)
extern "C" __global__ void scan_rows(i64* d, const i64* cost, long long lines, int H, int W, int* changed) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= lines) return;
    long long plane = t / W, c = t % W;
    long long base = plane * H * W + c;
    if (relax_line(d + base, cost + base, H, W)) *changed = 1;
}

// lines along L: one per (k, r, c)
extern "C" __global__ void scan_layers(i64* d, const i64* cost, long long lines, int L, int HW, int* changed) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= lines) return;
    long long k = t / HW, rc = t % HW;
    long long base = k * L * HW + rc;
    if (relax_line(d + base, cost + base, L, HW)) *changed = 1;
}

// key[v] = (d[v] << 32) | parent, the parent in the ROI's own local numbering (its own L, H, W)
extern "C" __global__ void parents(const i64* d, const i64* cost_col, const i64* cost_row, const i64* cost_via,
                                  const int* dims, long long total, int L, int H, int W, i64* key) {
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= total) return;
    i64 dv = d[v];
    if (dv >= UNREACHED) { key[v] = 0x7FFFFFFFFFFFFFFFLL; return; }
    long long per = (long long)L * H * W;
    int k = (int)(v / per);
    long long rest = v % per;
    int l = (int)(rest / ((long long)H * W)), r = (int)((rest / W) % H), c = (int)(rest % W);
    int h = dims[3 * k + 1], w = dims[3 * k + 2];
    i64 best = NO_PARENT;
    // (neighbour's offset in the padded box, its l, r, c, the entering cost array)
    int nl[6] = {l, l, l, l, l - 1, l + 1}, nr[6] = {r, r, r - 1, r + 1, r, r}, nc[6] = {c - 1, c + 1, c, c, c, c};
    const i64* costs[6] = {cost_col, cost_col, cost_row, cost_row, cost_via, cost_via};
    for (int m = 0; m < 6; m++) {
        if (nl[m] < 0 || nl[m] >= L || nr[m] < 0 || nr[m] >= H || nc[m] < 0 || nc[m] >= W) continue;
        i64 cost = costs[m][v];
        if (cost >= BLOCKED) continue;
        long long u = (long long)k * per + ((long long)nl[m] * H + nr[m]) * W + nc[m];
        i64 du = d[u];
        if (du < UNREACHED && du + cost == dv) {
            i64 local = ((long long)nl[m] * h + nr[m]) * w + nc[m];
            if (local < best) best = local;
        }
    }
    key[v] = (dv << 32) | best;
}

// One thread per ROI: the sink with the lowest distance plus stub cost (lowest position on ties), then the path back
// from it through the parents, written sink first into path[k * stride ...]; length 0 when no sink is reached.
extern "C" __global__ void best_paths(const i64* key, const int* dims, const long long* sinks, const i64* sink_cost,
                                      const int* sink_start, int K, int L, int H, int W, long long stride,
                                      int* path, int* length, int* chosen, i64* total) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= K) return;
    long long per = (long long)L * H * W;
    int h = dims[3 * k + 1], w = dims[3 * k + 2];
    i64 best = 0x7FFFFFFFFFFFFFFFLL;
    int pick = -1;
    for (int s = sink_start[k]; s < sink_start[k + 1]; s++) {
        long long local = sinks[s];
        long long lay = local / ((long long)h * w), rr = (local / w) % h, cc = local % w;
        i64 kv = key[k * per + (lay * H + rr) * W + cc];
        if (kv == 0x7FFFFFFFFFFFFFFFLL) continue;
        i64 t = (kv >> 32) + sink_cost[s];
        if (t < best) { best = t; pick = s - sink_start[k]; }
    }
    chosen[k] = pick;
    total[k] = best;
    if (pick < 0) { length[k] = 0; return; }
    long long local = sinks[sink_start[k] + pick];
    int n = 0;
    while (true) {
        path[k * stride + n++] = (int)local;
        long long lay = local / ((long long)h * w), rr = (local / w) % h, cc = local % w;
        i64 parent = key[k * per + (lay * H + rr) * W + cc] & NO_PARENT;
        if (parent == NO_PARENT || n >= stride) break;
        local = parent;
    }
    length[k] = n;
}
