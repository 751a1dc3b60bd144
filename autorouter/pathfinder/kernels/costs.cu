// PathFinder's move costs for a batch of K regions of interest, built on the device into the GPU search engine's
// padded (K, L, H, W) int32 arrays: the same numbers as costs.roi_costs computes on the host.
//
// Per node entered: cost = rint(step x (1 + history) x (1 + pres x occupancy)), capped at COST_CAP; BLOCKED32 where
// another net owns the node, where the occupancy reaches `wall` (when not 0), and in the padding. A via also needs
// its (row, col) free of other nets' via keep-outs and not too close to its own net's vias. Compiled with
// --fmad=false and evaluated in NumPy's order and precision (1 + history in float32, the rest in double), so every
// value equals the host's bit for bit.

// BLOCKED32 and COST_CAP come from autorouter/search/constants.py, FREE from lattice/obstacles.py, as -D options
// (device_costs.py).
#if !defined(BLOCKED32) || !defined(COST_CAP) || !defined(FREE)
#error "compile with the -D options of device_costs.kernel"
#endif

// roi: K rows of ROI_FIELDS (first row, first col, rows, cols, net, track owner map pointer, via owner map pointer,
// first own via, own vias, via gap as float64 bits, first own track cover node, their count, first own via cover
// site, their count), then the lists the rows point into: the own via sites as flat (row, col) indices, and the own
// cover (sorted flat nodes and sorted flat sites) where the occupancy still counts the net's own route. A new via
// may reuse one of its net's vias, but not sit closer to one than the via gap: the same test as
// lattice.disc_offsets.
#define ROI_FIELDS 14

// Whether the sorted list a[0..n) holds x.
__device__ bool holds(const long long* a, long long n, long long x) {
    long long lo = 0, hi = n;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (a[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo < n && a[lo] == x;
}

extern "C" __global__ void build_costs(const int* track, const int* via, const float* hist_track,
                                       const float* hist_via, const long long* roi, int K, int L, int H, int W,
                                       int R, int C, double pitch, double pres, double step, double step_wrong,
                                       double via_step, int wall, int* cost_col, int* cost_row, int* cost_via) {
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long per = (long long)L * H * W;
    if (v >= K * per) return;
    int k = (int)(v / per);
    long long rest = v % per;
    int l = (int)(rest / ((long long)H * W)), r = (int)((rest / W) % H), c = (int)(rest % W);
    const long long* p = roi + ROI_FIELDS * k;
    const long long* lists = roi + ROI_FIELDS * K;
    cost_col[v] = cost_row[v] = cost_via[v] = BLOCKED32;
    if (r >= p[2] || c >= p[3]) return;
    long long row = p[0] + r, col = p[1] + c, site = row * C + col;
    long long node = (long long)l * R * C + site;
    int net = (int)p[4];
    int owner = ((const int*)p[5])[node];
    int crowd = track[node] - (holds(lists + p[10], p[11], node) ? 1 : 0);
    if ((owner != FREE && owner != net) || (wall && crowd >= wall)) return;
    double mult = (double)(1.0f + hist_track[node]) * (1.0 + pres * (double)crowd);
    bool horizontal = (l % 2) == 0;
    cost_col[v] = (int)fmin(rint((horizontal ? step : step_wrong) * mult), (double)COST_CAP);
    cost_row[v] = (int)fmin(rint((horizontal ? step_wrong : step) * mult), (double)COST_CAP);
    int vowner = ((const int*)p[6])[site];
    int crowd_v = via[site] - (holds(lists + p[12], p[13], site) ? 1 : 0);
    if ((vowner != FREE && vowner != net) || (wall && crowd_v >= wall)) return;
    const long long* own = lists + p[7];
    double gap = __longlong_as_double(p[9]);
    bool near = false, is_own = false;
    for (long long i = 0; i < p[8]; i++) {
        long long dr = own[i] / C - row, dc = own[i] % C - col;
        is_own |= dr == 0 && dc == 0;
        near |= (double)(dr * dr + dc * dc) * pitch * pitch < gap * gap - 1e-9;
    }
    if (near && !is_own) return;
    double vmult = (double)(1.0f + hist_via[site]) * (1.0 + pres * (double)crowd_v);
    cost_via[v] = (int)fmin(rint(via_step * vmult), (double)COST_CAP);
}
