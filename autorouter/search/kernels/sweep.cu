// Min-plus sweeps over a batch of K regions of interest, padded to one (K, L, H, W) box.
//
// d: int64 distances, K*L*H*W. cost_col, cost_row, cost_via: int32, the price of entering a node by a move along a
// row (cost_col), a column (cost_row) or between layers (cost_via); BLOCKED32 means no such move. Padding cells are
// BLOCKED32 everywhere and start UNREACHED. Scans relax each lattice line forward then backward,
// d[i] = min(d[i], d[i-1] + cost[i]): lines along rows are scanned by a warp each, 32 nodes at a time, with a
// shuffle scan of the min-plus recurrence; lines along columns and layers by one thread each, which is coalesced
// there. Sweeps repeat until no scan changes anything: the same fixed point the CPU engine reaches. Parents are then
// the lowest-index predecessor on a shortest path.

typedef long long i64;
#define BLOCKED (1LL << 40)
#define UNREACHED (1LL << 56)
#define NO_PARENT 0xFFFFFFFFLL
#define BLOCKED32 0x7FFFFFFF
typedef int cost_t;

__device__ __forceinline__ int relax_line(i64* d, const cost_t* cost, int n, long long stride) {
    int changed = 0;
    i64 prev = d[0];
    for (int i = 1; i < n; i++) {
        cost_t c = cost[i * stride];
        i64 cur = d[i * stride];
        if (c != BLOCKED32 && prev + c < cur) { cur = prev + c; d[i * stride] = cur; changed = 1; }
        prev = cur;
    }
    prev = d[(long long)(n - 1) * stride];
    for (int i = n - 2; i >= 0; i--) {
        cost_t c = cost[i * stride];
        i64 cur = d[i * stride];
        if (c != BLOCKED32 && prev + c < cur) { cur = prev + c; d[i * stride] = cur; changed = 1; }
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

// lines along W: one warp per (k, l, r), 32 nodes at a time, forward then backward
extern "C" __global__ void scan_cols(i64* d, const cost_t* cost, long long lines, int W, int* changed) {
    long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (warp >= lines) return;
    i64* line = d + warp * W;
    const cost_t* c = cost + warp * W;
    int any = 0;
    for (int dir = 0; dir < 2; dir++) {
        i64 carry = UNREACHED;                         // the relaxed value just before this chunk
        for (int start = 0; start < W; start += 32) {
            int j = start + lane;
            int i = dir == 0 ? j : W - 1 - j;          // node this lane holds
            i64 a = UNREACHED, b = UNREACHED, old = UNREACHED;
            if (j < W) {
                old = line[i];
                b = old;
                // entering node i from the previous node in scan order costs cost[i]; the first node has none
                cost_t ci = c[i];
                a = (j == 0 || ci == BLOCKED32) ? UNREACHED : (i64)ci;
            }
            warp_scan(a, b, lane);
            i64 via_carry = carry + a;
            i64 v = via_carry < b ? via_carry : b;
            if (j < W && v < old) { line[i] = v; any = 1; }
            carry = __shfl_sync(0xFFFFFFFF, v, 31);
            if (carry > UNREACHED) carry = UNREACHED;
        }
    }
    if (any) *changed = 1;
}

// lines of n nodes, `stride` apart, one thread each: along H (n = H, stride = W: one line per (k, l, c)) and along L
// (n = L, stride = H * W: one per (k, r, c)); neighbouring threads read neighbouring nodes, so access is coalesced
extern "C" __global__ void scan_strided(i64* d, const cost_t* cost, long long lines, int n, long long stride,
                                        int* changed) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= lines) return;
    long long base = (t / stride) * n * stride + t % stride;
    if (relax_line(d + base, cost + base, n, stride)) *changed = 1;
}

// key[v] = (d[v] << 32) | parent, the parent in the ROI's own local numbering (its own L, H, W)
extern "C" __global__ void parents(const i64* d, const cost_t* cost_col, const cost_t* cost_row,
                                  const cost_t* cost_via,
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
    const cost_t* costs[6] = {cost_col, cost_col, cost_row, cost_row, cost_via, cost_via};
    for (int m = 0; m < 6; m++) {
        if (nl[m] < 0 || nl[m] >= L || nr[m] < 0 || nr[m] >= H || nc[m] < 0 || nc[m] >= W) continue;
        cost_t cost = costs[m][v];
        if (cost == BLOCKED32) continue;
        long long u = (long long)k * per + ((long long)nl[m] * H + nr[m]) * W + nc[m];
        i64 du = d[u];
        if (du < UNREACHED && du + cost == dv) {
            i64 local = ((long long)nl[m] * h + nr[m]) * w + nc[m];
            if (local < best) best = local;
        }
    }
    key[v] = (dv << 32) | best;
}

// d[k, source] = min(d, start cost): one thread per source, after d is filled with UNREACHED
extern "C" __global__ void seed(i64* d, const long long* node, const i64* cost, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) atomicMin((unsigned long long*)(d + node[t]), (unsigned long long)cost[t]);
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
