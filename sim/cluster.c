/* The simulated hardware: presets, profile files, and the placement of ranks
 * on nodes.
 *
 * A profile file is `key = value` lines with '#' comments, read the way
 * core/config.c reads scenario files (errors name FILE:LINE). One key table
 * drives reading, writing and the error messages, so they cannot drift. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileio.h"
#include "../core/lines.h"
#include "cluster.h"

const char *const allreduce_names[] = {
    [ALLREDUCE_RING] = "ring",
    [ALLREDUCE_TREE] = "tree",
    [ALLREDUCE_HIERARCHICAL] = "hierarchical",
};
#define N_ALLREDUCE ((int)(sizeof allreduce_names / sizeof allreduce_names[0]))

/* ---- presets ----------------------------------------------------------
 *
 * The MLP workload is fp32. On A100 and H100 the realistic path for fp32
 * GEMMs is TF32 tensor cores (cuBLAS CUBLAS_TF32_TENSOR_OP_MATH), so device
 * FLOP/s are the dense TF32 tensor-core peak times GEMM_SUSTAINED, the share
 * large cuBLAS GEMMs typically sustain. Small GEMMs reach less; per-op
 * overhead covers part of that. If the CUDA device runs plain FP32 SGEMM the
 * peak is the FP32 figure instead (H100 SXM 67, A100 19.5 TFLOP/s).
 * Memory bandwidth is the HBM peak times HBM_SUSTAINED: streaming kernels
 * (STREAM, BabelStream triad) reach roughly 85-90% of HBM peak.
 * Link figures are per direction. Every number here is a placeholder of the
 * right order until `strata calibrate` measures a machine. */
#define GEMM_SUSTAINED 0.5
#define HBM_SUSTAINED 0.9
#define GiB ((int64_t)1 << 30)

const struct cluster cluster_presets[] = {
    {
        .name = "ideal",
        .is_ideal = true,
        /* Unused: plan_unit_cost times compute on the ideal cluster. Memory
         * is unbounded (INT64_MAX) and links are free. */
        .device = {.flops_per_s = 1, .mem_bw_bytes_per_s = INFINITY, .op_overhead_s = 0,
                   .mem_bytes = INT64_MAX},
        .intra = {.latency_s = 0, .bw_bytes_per_s = INFINITY},
        .inter = {.latency_s = 0, .bw_bytes_per_s = INFINITY},
        .devices_per_node = 8,
    },
    {
        /* NVIDIA DGX H100: 8 H100 SXM5 per node, NVLink 4 + NVSwitch inside,
         * 8 ConnectX-7 NDR InfiniBand ports (one per GPU) between nodes. */
        .name = "h100-nvlink-ib",
        .device = {
            /* H100 SXM5 datasheet: TF32 tensor core 989 TFLOP/s with
             * sparsity, 494.7 dense. */
            .flops_per_s = GEMM_SUSTAINED * 494.7e12,
            /* Datasheet: 80 GB HBM3 at 3.35 TB/s. */
            .mem_bw_bytes_per_s = HBM_SUSTAINED * 3.35e12,
            /* Kernel launch plus framework, ~5 us an op. */
            .op_overhead_s = 5e-6,
            .mem_bytes = 80 * GiB,
        },
        /* NVLink 4: 900 GB/s a GPU, both directions together (18 links x
         * 50 GB/s), so 450 GB/s each way. Latency: NCCL's tuning model
         * (src/graph/tuning.cc, hwLat) puts an NVLink ring step at 0.47 us
         * (LL) to 3.4 us (Simple); we take 3 us. */
        .intra = {.latency_s = 3e-6, .bw_bytes_per_s = 450e9},
        /* ConnectX-7 NDR: 400 Gb/s = 50 GB/s each way, one port per GPU.
         * Latency ~5 us through NCCL (tuning.cc hwLat NET ring: 2.7 us LL,
         * 9.6 us Simple). */
        .inter = {.latency_s = 5e-6, .bw_bytes_per_s = 50e9},
        .devices_per_node = 8,
    },
    {
        /* A100 PCIe servers on 100 Gb Ethernet. 4 GPUs a node: the common
         * 2U chassis (e.g. Dell PowerEdge R750xa) hold four double-wide
         * PCIe GPUs; 8-GPU 4U chassis exist too (--devices-per-node 8). */
        .name = "a100-pcie-eth",
        .device = {
            /* A100 datasheet: TF32 tensor core 156 TFLOP/s dense (312
             * with sparsity). */
            .flops_per_s = GEMM_SUSTAINED * 156e12,
            /* A100 80GB PCIe datasheet: 80 GB HBM2e at 1,935 GB/s. */
            .mem_bw_bytes_per_s = HBM_SUSTAINED * 1.935e12,
            /* Older host stacks, ~10 us an op. */
            .op_overhead_s = 10e-6,
            .mem_bytes = 80 * GiB,
        },
        /* PCIe 4.0 x16: 32 GB/s raw each way, ~25 GB/s achieved GPU to GPU
         * through the host bridge. Latency: tuning.cc hwLat PCI ring step
         * 1.0 us (LL) to 5.7 us (Simple); we take 5 us. */
        .intra = {.latency_s = 5e-6, .bw_bytes_per_s = 25e9},
        /* 100 GbE: 12.5 GB/s raw, ~12 GB/s achieved; ~20 us over TCP
         * sockets (NCCL's socket transport). One NIC per node: a flat ring
         * has one flow through it, but hierarchical's g concurrent
         * inter-node rings would share it, which this one-link-profile
         * model does not see (it prices each at the full 12 GB/s). */
        .inter = {.latency_s = 20e-6, .bw_bytes_per_s = 12e9},
        .devices_per_node = 4,
    },
    {
        /* CPU cores of one machine, ranks talking through MPI shared
         * memory. Placeholders of the right order: calibration will
         * measure them. */
        .name = "cpu-loopback",
        .device = {
            /* One modern x86 core: AVX2, 2 FMA units x 8 fp32 lanes x 2
             * flops x ~3 GHz = 96 GFLOP/s peak; OpenBLAS SGEMM sustains
             * about half on one core. */
            .flops_per_s = 0.5 * 96e9,
            /* ~10 GB/s of DRAM bandwidth that one core can draw. */
            .mem_bw_bytes_per_s = 10e9,
            .op_overhead_s = 2e-6,    /* a BLAS call and our dispatch */
            .mem_bytes = 8 * GiB,   /* a share of host memory a rank */
        },
        /* MPI shared-memory transport: ~0.5 us, ~5 GB/s for one
         * copy-in/copy-out pair. */
        .intra = {.latency_s = 0.5e-6, .bw_bytes_per_s = 5e9},
        /* One machine: "nodes" are groups of cores that still talk through
         * shared memory, so the same link. */
        .inter = {.latency_s = 0.5e-6, .bw_bytes_per_s = 5e9},
        .devices_per_node = 2,    /* this project's build machine has 2 cores */
    },
};
const size_t cluster_n_presets = sizeof cluster_presets / sizeof cluster_presets[0];

/* ---- the keys of a profile file --------------------------------------- */

enum key_type {
    KEY_NAME,     /* text, kept only in the file (see cluster_load) */
    KEY_BOOL,     /* true | false */
    KEY_SECONDS,  /* 0 .. KEY_MAX_SECONDS */
    KEY_RATE,     /* KEY_MIN_RATE .. KEY_MAX_RATE */
    KEY_BW,       /* KEY_MIN_RATE .. KEY_MAX_RATE, or inf: free */
    KEY_BYTES,    /* integer > 0 */
    KEY_COUNT,    /* integer 1 .. KEY_COUNT_MAX */
    KEY_COUNT0,   /* integer 0 .. KEY_COUNT_MAX */
    KEY_SIGMA,    /* finite, 0 .. JITTER_MAX_SIGMA */
    KEY_TIMESHARE, /* timeshare_slowdown: 1 to CLUSTER_MAX_TIMESHARE numbers in
                    * (0, KEY_MAX_SLOWDOWN], commas */
    KEY_COST_BW,  /* KEY_RATE's range, or inf; 0 (absent) = free, and not written */
    KEY_COST_S,   /* as KEY_SECONDS, written only when > 0 */
    KEY_NODES,    /* as KEY_COUNT0, written only when > 0 */
    KEY_RELAUNCH, /* restart_s_at_ranks: failure_relaunch_points_parse's text, written
                   * only when it has points */
};
#define KEY_COUNT_MAX 1024   /* as --devices-per-node */
/* Bounds that keep every simulated time finite: an op's time is its FLOPs
 * or bytes (below 1e30 for any model and batch the options take) over a
 * rate of at least 1 per second, plus overheads and latencies of at most a
 * million seconds, each stretched at most a million times; a run sums at
 * most ~1e15 of them, far below the 1.8e308 where doubles end. 1e-300
 * FLOP/s or 1e308 s of overhead make op times infinite, and then the
 * run's times NaN. */
#define KEY_MIN_RATE 1.0
#define KEY_MAX_RATE 1e30
#define KEY_MAX_SECONDS 1e6
#define KEY_MAX_SLOWDOWN 1e6

struct key_spec {
    const char *name;
    enum key_type type;
    size_t offset;        /* into struct cluster */
    bool is_required;
    const char *what;     /* its meaning, for `strata help cluster` */
};

#define KEY(n, t, field, req, what) {n, t, offsetof(struct cluster, field), req, what}
static const struct key_spec keys[] = {
    KEY("name", KEY_NAME, name, false, "a label; reports name the file's path instead"),
    KEY("ideal", KEY_BOOL, is_ideal, false,
        "unit costs (a layer's forward 1 s, backward 2 s), free links"),
    KEY("flops_per_s", KEY_RATE, device.flops_per_s, true,
        "a device's sustained arithmetic, FLOP/s"),
    KEY("mem_bw_bytes_per_s", KEY_BW, device.mem_bw_bytes_per_s, true,
        "a device's memory bandwidth, bytes/s"),
    KEY("op_overhead_s", KEY_SECONDS, device.op_overhead_s, true,
        "added to every compute op (kernel launch, framework)"),
    KEY("mem_bytes", KEY_BYTES, device.mem_bytes, true,
        "a device's memory, bytes: a plan that needs more is warned about"),
    KEY("devices_per_node", KEY_COUNT, devices_per_node, true,
        "ranks a node holds, in rank order (--devices-per-node overrides)"),
    KEY("intra_latency_s", KEY_SECONDS, intra.latency_s, true,
        "alpha of a link inside a node, seconds a message"),
    KEY("intra_bw_bytes_per_s", KEY_BW, intra.bw_bytes_per_s, true,
        "beta of a link inside a node, bytes/s each way, per device"),
    KEY("inter_latency_s", KEY_SECONDS, inter.latency_s, true,
        "alpha of a link between nodes, seconds a message"),
    KEY("inter_bw_bytes_per_s", KEY_BW, inter.bw_bytes_per_s, true,
        "beta of a link between nodes, bytes/s each way, per device"),
    KEY("cores_per_node", KEY_COUNT0, cores_per_node, false,
        "cores a node's ranks share (CPU ranks); 0 = each device its own"),
    KEY("allreduce_gamma_s_per_byte", KEY_SECONDS, allreduce_gamma_s_per_byte, false,
        "seconds a byte an all-reduce spends summing; 0 = fused into the copies"),
    KEY("jitter_forward_sigma", KEY_SIGMA, jitter.forward_sigma, false,
        "spread of forward op times (log-normal sigma; --jitter)"),
    KEY("jitter_backward_sigma", KEY_SIGMA, jitter.backward_sigma, false,
        "spread of backward op times"),
    KEY("jitter_update_sigma", KEY_SIGMA, jitter.update_sigma, false,
        "spread of update op times"),
    KEY("timeshare_slowdown", KEY_TIMESHARE, timeshare_slowdown, false,
        "measured slowdown of 1, 2, ... ranks computing at once on a node"),
    KEY("ckpt_write_bw_bytes_per_s", KEY_COST_BW, ckpt_write_bw_bytes_per_s, false,
        "checkpoint writes, bytes/s a device; absent = free"),
    KEY("ckpt_read_bw_bytes_per_s", KEY_COST_BW, ckpt_read_bw_bytes_per_s, false,
        "checkpoint reads, bytes/s a device; absent = free"),
    KEY("restart_s", KEY_COST_S, restart_s, false, "a relaunch of the job's processes"),
    KEY("restart_per_rank_s", KEY_COST_S, restart_per_rank_s, false,
        "a relaunch's added time per rank started"),
    KEY("detect_s", KEY_COST_S, detect_s, false, "from a rank's death to its noticing"),
    KEY("restart_s_at_ranks", KEY_RELAUNCH, restart_s_at_ranks, false,
        "relaunch times measured at rank counts (replace restart_s)"),
    KEY("nodes", KEY_NODES, measured_nodes, false,
        "the nodes calibrate measured the links on: a record only; --nodes sets a run's"),
};
#undef KEY
#define N_KEYS ((int)(sizeof keys / sizeof keys[0]))

static const char *allowed_of(enum key_type t)
{
    switch (t) {
    case KEY_NAME: return "any text";
    case KEY_BOOL: return "true or false";
    case KEY_SECONDS: return "a number of seconds from 0 to 1e6";
    case KEY_RATE: return "a number from 1 to 1e30";
    case KEY_BW: return "a number from 1 to 1e30, or inf for a free link";
    case KEY_COST_BW: return "bytes/s from 1 to 1e30, or inf for free";
    case KEY_COST_S: return "a number of seconds from 0 to 1e6";
    case KEY_BYTES: return "an integer > 0";
    case KEY_COUNT: return "an integer from 1 to 1024";
    case KEY_COUNT0:
    case KEY_NODES: return "an integer from 0 to 1024";
    case KEY_SIGMA: return "a log-normal sigma from 0 to 2; 0 = no spread";
    case KEY_TIMESHARE:
        return "1 to 128 numbers > 0 and at most 1e6, separated by commas: the slowdown of 1, "
               "2, ... ranks";
    case KEY_RELAUNCH:
        return "RANKS:SECONDS entries separated by commas, ranks increasing";
    }
    return "?";
}

/* Plain decimal only, as core/config.c: strtod alone would also take "nan",
 * hex floats and leading blanks. */
static bool parse_real(const char *text, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(text, &end);
    return *text && strspn(text, "0123456789+-.eE") == strlen(text) && !*end;
}

static bool parse_int(const char *text, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(text, &end, 10);
    bool starts_ok = isdigit((unsigned char)text[0]) ||
                     ((text[0] == '-' || text[0] == '+') && isdigit((unsigned char)text[1]));
    return starts_ok && !*end && errno != ERANGE;
}

static char *trim(char *s);

/* Parses text as k's value into c. The message names the key; the caller
 * adds FILE:LINE. */
static int set_key(struct cluster *c, const struct key_spec *k, const char *text, struct err *e)
{
    char *field = (char *)c + k->offset;
    double d = 0;
    long long i = 0;
    bool ok;
    switch (k->type) {
    case KEY_NAME:
        return 0;
    case KEY_BOOL:
        if (strcmp(text, "true") && strcmp(text, "false")) break;
        *(bool *)field = !strcmp(text, "true");
        return 0;
    case KEY_SECONDS:
    case KEY_RATE:
    case KEY_BW:
    case KEY_SIGMA:
    case KEY_COST_BW:
    case KEY_COST_S:
        if ((k->type == KEY_BW || k->type == KEY_COST_BW) && !strcmp(text, "inf")) {
            d = INFINITY;
        } else {
            if (!parse_real(text, &d)) break;
            /* !isfinite: 1e999 overflowed */
            ok = k->type == KEY_SECONDS || k->type == KEY_COST_S
                     ? d >= 0 && d <= KEY_MAX_SECONDS
                 : k->type == KEY_SIGMA ? d >= 0 && d <= JITTER_MAX_SIGMA
                                        : d >= KEY_MIN_RATE && d <= KEY_MAX_RATE;
            if (!ok) break;
        }
        memcpy(field, &d, sizeof d);
        return 0;
    case KEY_TIMESHARE: {
        /* "1,1.02,1.5": each entry a plain decimal > 0, no empty ones */
        char item[64];
        int n = 0;
        const char *p = text;
        for (;;) {
            size_t len = strcspn(p, ",");
            if (len == 0 || len >= sizeof item || n == CLUSTER_MAX_TIMESHARE) break;
            memcpy(item, p, len);
            item[len] = '\0';
            char *it = trim(item);
            if (!parse_real(it, &d) || !(d > 0 && d <= KEY_MAX_SLOWDOWN)) break;
            c->timeshare_slowdown[n++] = d;
            if (p[len] == '\0') {
                c->n_timeshare = n;
                return 0;
            }
            p += len + 1;
        }
        c->n_timeshare = 0;
        break;
    }
    case KEY_RELAUNCH:
        /* its own message: names the key, the text and what is allowed */
        return failure_relaunch_points_parse(text, k->name, (struct relaunch_points *)field, e);
    case KEY_BYTES:
        if (!parse_int(text, &i) || i <= 0) break;
        *(int64_t *)field = (int64_t)i;
        return 0;
    case KEY_COUNT:
    case KEY_COUNT0:
    case KEY_NODES:
        if (!parse_int(text, &i) || i < (k->type == KEY_COUNT) || i > KEY_COUNT_MAX) break;
        *(int *)field = (int)i;
        return 0;
    }
    return err_set(e, ERR_INPUT, "%s: '%.60s%s' is not allowed (%s)", k->name, text,
                   strlen(text) > 60 ? "..." : "", allowed_of(k->type));
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

static const struct key_spec *find_key(const char *name)
{
    for (int i = 0; i < N_KEYS; i++)
        if (!strcmp(keys[i].name, name)) return &keys[i];
    return NULL;
}

static void list_keys(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < N_KEYS && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", keys[i].name);
}

/* One line, comment cut and trimmed, not empty. line_of[k] records where
 * key k was set (0: not yet). */
static int load_line(struct cluster *c, char *line, long line_of[], long lineno, struct err *e)
{
    char *eq = strchr(line, '=');
    if (!eq)
        return err_set(e, ERR_INPUT, "expected 'key = value', got '%.80s%s'", line,
                       strlen(line) > 80 ? "..." : "");
    *eq = '\0';
    char *name = trim(line), *value = trim(eq + 1);
    if (!*name)
        return err_set(e, ERR_INPUT, "expected 'key = value', got '= %.80s'", value);
    const struct key_spec *k = find_key(name);
    if (!k) {
        char names[512];
        list_keys(names, sizeof names);
        return err_set(e, ERR_INPUT, "'%.60s' is not a key of a cluster profile (keys: %s)", name,
                       names);
    }
    int ki = (int)(k - keys);
    if (line_of[ki])
        return err_set(e, ERR_INPUT, "%s: set twice (first on line %ld)", name, line_of[ki]);
    if (!*value)
        return err_set(e, ERR_INPUT, "%s: no value (%s)", name, allowed_of(k->type));
    TRY(set_key(c, k, value, e));
    line_of[ki] = lineno;
    return 0;
}

void cluster_print_keys(FILE *out)
{
    for (int pass = 0; pass < 2; pass++) {
        fputs(pass ? "\noptional keys:\n" : "required keys:\n", out);
        for (int i = 0; i < N_KEYS; i++)
            if (keys[i].is_required == !pass)
                fprintf(out, "  %-27s %s\n  %-27s (%s)\n", keys[i].name, keys[i].what, "",
                        allowed_of(keys[i].type));
    }
}

/* Reads the profile at path into c (c->name set by the caller). */
static int load_file(FILE *f, const char *path, struct cluster *c, struct err *e)
{
    long line_of[N_KEYS] = {0};
    /* Bounded lines: /dev/zero or a binary file is an error naming the
     * line, not a read without end. */
    struct lines *r = malloc(sizeof *r);
    if (!r) return err_set(e, ERR_NOMEM, "%s: out of memory", path);
    lines_open(r, f);
    char *line;
    int rc;
    while ((rc = lines_next(r, &line, e)) > 0) {
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *s = trim(line);
        if (!*s) continue;
        if ((rc = load_line(c, s, line_of, r->lineno, e)) < 0) break;
    }
    if (rc < 0) err_prefix(e, "%s:%ld", path, r->lineno);
    free(r);
    if (rc < 0) return rc;

    char missing[512];
    size_t used = 0;
    missing[0] = '\0';
    for (int i = 0; i < N_KEYS; i++)
        if (keys[i].is_required && !line_of[i] && used < sizeof missing)
            used += (size_t)snprintf(missing + used, sizeof missing - used, "%s%s",
                                     used ? ", " : "", keys[i].name);
    if (used)
        return err_set(e, ERR_INPUT,
                       "%s: missing %s (a cluster profile sets every required key; "
                       "`strata help cluster` lists them)",
                       path, missing);
    return 0;
}

int cluster_load(const char *name_or_path, struct cluster *c, struct err *e)
{
    for (size_t i = 0; i < cluster_n_presets; i++)
        if (!strcmp(cluster_presets[i].name, name_or_path)) {
            *c = cluster_presets[i];
            return 0;
        }

    FILE *f = fopen(name_or_path, "r");
    if (!f) {
        char presets[256];
        size_t used = 0;
        for (size_t i = 0; i < cluster_n_presets && used < sizeof presets; i++)
            used += (size_t)snprintf(presets + used, sizeof presets - used, "%s%s",
                                     i ? ", " : "", cluster_presets[i].name);
        return err_set(e, ERR_INPUT,
                       "--cluster: '%.200s' is neither a preset (%s) nor a readable file (%s)",
                       name_or_path, presets, strerror(errno));
    }
    if (lines_is_directory(f)) {
        fclose(f);
        return err_set(e, ERR_INPUT, "--cluster: '%.200s' is a directory, not a profile file "
                       "(key = value lines; strata calibrate writes one)", name_or_path);
    }
    /* Defaults for what a file need not say; the rest it must. */
    struct cluster loaded = {.is_ideal = false, .allreduce = ALLREDUCE_RING};
    int rc = load_file(f, name_or_path, &loaded, e);
    fclose(f);
    /* "--cluster: PATH:LINE: ...": the option too, since a bad profile
     * (or a directory, or a report given by mistake) is often not the file
     * the user meant to name */
    if (rc < 0) return err_prefix(e, "--cluster");
    /* The name is the path as given, not the file's `name` key: a report
     * then names the file actually read, even when it is an edited copy of
     * a preset. Its control characters are escaped ("\x1b"): every header
     * and note prints it. A long path keeps its tail, the informative end. */
    const size_t keep = sizeof loaded.name - 4;   /* after "..." */
    size_t raw_len = strlen(name_or_path);
    const char *tail = raw_len < sizeof loaded.name ? name_or_path : name_or_path + raw_len - keep;
    char shown[4 * sizeof loaded.name];   /* "\xNN" for each byte at worst */
    size_t len = err_escape(shown, sizeof shown, tail);
    if (tail == name_or_path && len < sizeof loaded.name)
        memcpy(loaded.name, shown, len + 1);
    else
        snprintf(loaded.name, sizeof loaded.name, "...%s", shown + (len > keep ? len - keep : 0));
    *c = loaded;
    return 0;
}

int cluster_set_jitter(struct cluster *c, const char *choice, struct err *e)
{
    if (!choice || !strcmp(choice, "auto")) return 0;
    if (!strcmp(choice, "off")) {
        c->jitter = (struct jitter_spec){0};
        return 0;
    }
    if (strcmp(choice, "on"))
        return err_set(e, ERR_INPUT, "--jitter: '%.40s' is not one of auto, on, off", choice);
    if (!jitter_is_set(&c->jitter))
        return err_set(e, ERR_INPUT, "--jitter on: cluster '%s' carries no op-time spread (no "
                       "jitter_*_sigma key; `strata calibrate -o FILE` measures one), so there "
                       "is nothing to draw from: use --jitter auto or off", c->name);
    return 0;
}

/* ---- layout ----------------------------------------------------------- */

int cluster_layout(struct cluster *c, int n_ranks, long long nodes, long long devices_per_node,
                   const char *allreduce, struct err *e)
{
    if (n_ranks < 1)
        return err_set(e, ERR_INPUT, "cluster: a plan of %d ranks cannot be placed", n_ranks);
    if (devices_per_node < 0 || devices_per_node > INT_MAX)
        return err_set(e, ERR_INPUT,
                       "--devices-per-node: %lld is not allowed (0 = the profile's, else > 0)",
                       devices_per_node);
    if (nodes < 0 || nodes > INT_MAX)
        return err_set(e, ERR_INPUT,
                       "--nodes: %lld is not allowed (0 = as many as the ranks need, else > 0)",
                       nodes);
    int algo = ALLREDUCE_RING;   /* NULL: the default, as config's */
    if (allreduce) {
        for (algo = 0; algo < N_ALLREDUCE && strcmp(allreduce, allreduce_names[algo]); algo++)
            ;
        if (algo == N_ALLREDUCE)
            return err_set(e, ERR_INPUT,
                           "--allreduce: '%.60s' is not one of ring, tree, hierarchical",
                           allreduce);
    }
    int dpn = devices_per_node > 0 ? (int)devices_per_node : c->devices_per_node;
    if (dpn < 1)
        return err_set(e, ERR_INPUT, "cluster '%s': %d devices per node (want > 0)", c->name, dpn);
    long long needed = ((long long)n_ranks + dpn - 1) / dpn;
    if (nodes > 0 && nodes < needed)
        return err_set(e, ERR_INPUT,
                       "--nodes %lld holds %lld devices, the plan needs %d ranks "
                       "(use --nodes %lld or more, or 0 to fit the plan)",
                       nodes, nodes * dpn, n_ranks, needed);
    c->devices_per_node = dpn;
    c->nodes = (int)(nodes > 0 ? nodes : needed);
    c->allreduce = (enum allreduce_algo)algo;
    /* Nodes fill in rank order, so the first holds the most ranks. One
     * factor for the whole cluster, the fullest node's: a synchronous step
     * waits for its slowest rank anyway. */
    int fullest = n_ranks < dpn ? n_ranks : dpn;
    c->oversubscription = 1;
    if (c->cores_per_node > 0 && fullest > c->cores_per_node)
        c->oversubscription = (double)fullest / c->cores_per_node;
    /* Measured, where calibrate measured it: it holds what the rule leaves
     * out (memory bandwidth shared below the core count, the scheduler's
     * own cost above it, and a rank alone running faster than the ranks
     * that calibrate measured together). */
    c->time_share_stretch = cluster_timeshare_of(c, fullest);
    return 0;
}

double cluster_timeshare_of(const struct cluster *c, int k)
{
    int K = c->n_timeshare;
    if (K < 1 || k < 1) return 0;
    if (k <= K) return c->timeshare_slowdown[k - 1];
    int even_from = K > c->cores_per_node ? K : c->cores_per_node;
    return c->timeshare_slowdown[K - 1] * fmax(1, (double)k / even_from);
}

/* bytes at bw_bytes_per_s, where 0 and inf are free */
static double transfer_s(int64_t bytes, double bw_bytes_per_s)
{
    return bw_bytes_per_s > 0 && isfinite(bw_bytes_per_s) ? (double)bytes / bw_bytes_per_s : 0;
}

struct failure_costs cluster_failure_costs(const struct cluster *c, int64_t state_bytes)
{
    return (struct failure_costs){
        .checkpoint_s = transfer_s(state_bytes, c->ckpt_write_bw_bytes_per_s),
        .load_s = transfer_s(state_bytes, c->ckpt_read_bw_bytes_per_s),
        .commit_s = transfer_s(2 * state_bytes, c->device.mem_bw_bytes_per_s),
        .detect_s = c->detect_s,
        .relaunch_s = c->restart_s,
        .relaunch_per_rank_s = c->restart_per_rank_s,
        .relaunch_at = c->restart_s_at_ranks,
    };
}

/* ---- writing ---------------------------------------------------------- */

/* Appends `key = value` for k to buf. Doubles as %.17g: strtod of that text
 * gives back the same double (17 significant digits identify any binary64);
 * INFINITY prints as "inf", which KEY_BW reads back. */
static size_t format_key(const struct cluster *c, const struct key_spec *k, char *buf, size_t n)
{
    const char *field = (const char *)c + k->offset;
    double d;
    switch (k->type) {
    case KEY_NAME: {
        /* Informational; '#' would start a comment and a newline a new
         * line, so neither is written. */
        char name[sizeof c->name];
        snprintf(name, sizeof name, "%s", c->name);
        for (char *p = name; *p; p++)
            if (*p == '#' || iscntrl((unsigned char)*p)) *p = '_';
        return (size_t)snprintf(buf, n, "%s = %s\n", k->name, *name ? name : "unnamed");
    }
    case KEY_BOOL:
        return (size_t)snprintf(buf, n, "%s = %s\n", k->name,
                                *(const bool *)field ? "true" : "false");
    case KEY_TIMESHARE: {
        if (c->n_timeshare < 1) return 0;   /* absent: not measured */
        size_t used = (size_t)snprintf(buf, n, "%s = ", k->name);
        for (int i = 0; i < c->n_timeshare; i++)
            used += (size_t)snprintf(used < n ? buf + used : NULL, used < n ? n - used : 0,
                                     "%s%.17g", i ? "," : "", c->timeshare_slowdown[i]);
        used += (size_t)snprintf(used < n ? buf + used : NULL, used < n ? n - used : 0, "\n");
        return used;
    }
    case KEY_SIGMA:
        /* absent = 0: a profile without spread is written as before */
        memcpy(&d, field, sizeof d);
        if (d == 0) return 0;
        return (size_t)snprintf(buf, n, "%s = %.17g\n", k->name, d);
    case KEY_COST_BW:
    case KEY_COST_S:
        /* absent (0) = free: a profile that prices no failure is written as
         * before; inf, free too, is written as given */
        memcpy(&d, field, sizeof d);
        if (!(d > 0)) return 0;
        return (size_t)snprintf(buf, n, "%s = %.17g\n", k->name, d);
    case KEY_SECONDS:
    case KEY_RATE:
    case KEY_BW:
        memcpy(&d, field, sizeof d);
        return (size_t)snprintf(buf, n, "%s = %.17g\n", k->name, d);
    case KEY_BYTES:
        return (size_t)snprintf(buf, n, "%s = %" PRId64 "\n", k->name, *(const int64_t *)field);
    case KEY_RELAUNCH: {
        /* absent (no points): profiles that do not measure it are written as before */
        const struct relaunch_points *p = (const struct relaunch_points *)field;
        if (p->n < 1) return 0;
        size_t used = (size_t)snprintf(buf, n, "%s = ", k->name);
        used += failure_relaunch_points_format(p, used < n ? buf + used : NULL,
                                               used < n ? n - used : 0);
        used += (size_t)snprintf(used < n ? buf + used : NULL, used < n ? n - used : 0, "\n");
        return used;
    }
    case KEY_NODES:
        /* absent (0) = not said: profiles of one machine are written as before */
        if (*(const int *)field < 1) return 0;
        return (size_t)snprintf(buf, n, "%s = %d\n", k->name, *(const int *)field);
    case KEY_COUNT:
    case KEY_COUNT0:
        return (size_t)snprintf(buf, n, "%s = %d\n", k->name, *(const int *)field);
    }
    return 0;
}

size_t cluster_format(const struct cluster *c, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(
        buf, n,
        "# strata cluster profile; the keys are described in sim/cluster.h.\n"
        "# Numbers are exact (%%.17g); inf is a free link.\n");
    for (int i = 0; i < N_KEYS; i++)
        used += format_key(c, &keys[i], used < n ? buf + used : NULL, used < n ? n - used : 0);
    return used;
}

int cluster_write(const struct cluster *c, const char *path, struct err *e)
{
    char text[CLUSTER_TEXT_BYTES];
    size_t used = cluster_format(c, text, sizeof text);
    if (used >= sizeof text)   /* cannot happen: a dozen short lines */
        return err_set(e, ERR_RUN, "cluster_write: profile longer than %zu bytes", sizeof text);
    TRY_CTX(e, file_write_atomic(path, text, used, e), "cluster profile '%s'", c->name);
    return 0;
}
