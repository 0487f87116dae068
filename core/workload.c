/* Workload parsing and per-layer sizes. The formulas, per sample:
 *
 * Dense layer in -> out (fp32, 4-byte elements):
 *   params        = in*out + out                       (W and b)
 *   forward       = 2*in*out + out                     (GEMM multiply-adds, bias)
 *   backward      = 2*in*out + out                     (dW = x^T dy, db)
 *                 + 2*in*out                           (dx = dy W^T; not for layer 0,
 *                                                       whose input needs no gradient)
 *   output        = out * 4 bytes                      (crosses a stage boundary)
 *   saved         = (in + out) * 4 bytes               (x for dW, y for the ReLU mask)
 *
 * Transformer (sizes only; bf16 activations and gradients, 2-byte elements),
 * h = hidden, s = seq, V = vocab, a = heads:
 *   embedding     params V*h + s*h (token and learned position tables, GPT-2);
 *                 no FLOPs (a lookup); output s*h*2 bytes
 *   block         params 12h^2 + 13h (QKV 3h^2+3h, projection h^2+h, MLP
 *                 8h^2+5h, two layer-norms 4h);
 *                 forward 24*s*h^2 + 4*s^2*h, backward twice that
 *                 (Narayanan et al., SC'21, "Efficient Large-Scale Language
 *                 Model Training on GPU Clusters Using Megatron-LM", sec. 5.1);
 *                 saved s*h*(34 + 5*a*s/h) bytes (Korthikanti et al., 2022,
 *                 "Reducing Activation Recomputation in Large Transformer
 *                 Models", eq. 1, 16-bit activations, no recomputation)
 *   head          final layer-norm 2h + output projection V*h, untied from the
 *                 embedding (as Megatron's --untie-embeddings-and-output-weights,
 *                 so pipeline stages share no weights); forward 2*s*h*V,
 *                 backward 4*s*h*V; saved s*h*2 + s*V*4 bytes (input, fp32 logits)
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

const struct workload_preset workload_presets[] = {
    {"fmnist-small", "mlp:784-256-128-10", "Fashion-MNIST MLP, 3 layers, 235k parameters"},
    {"fmnist-deep", "mlp:784-256-256-256-10", "Fashion-MNIST MLP, 4 layers, 335k parameters"},
    {"fmnist-8", "mlp:784-256-256-256-256-256-256-256-10",
     "Fashion-MNIST MLP, 8 layers, 598k parameters: room for 8 pipeline stages"},
    {"fmnist-large", "mlp:784-4096-4096-4096-10", "Fashion-MNIST MLP, 4 layers, 37M parameters"},
    {"gpt2-small", "transformer:layers=12,hidden=768,seq=1024,vocab=50257", "GPT-2 124M-class"},
    {"gpt2-xl", "transformer:layers=48,hidden=1600,seq=1024,vocab=50257", "GPT-2 1.5B-class"},
    {"gpt3-2.7b", "transformer:layers=32,hidden=2560,seq=2048,vocab=50257,heads=32",
     "GPT-3 2.7B-class"},
    {"gpt3-175b", "transformer:layers=96,hidden=12288,seq=2048,vocab=50257,heads=96",
     "GPT-3 175B"},
};
const size_t workload_n_presets = sizeof workload_presets / sizeof workload_presets[0];

#define MLP_EXAMPLE "mlp:784-256-128-10"
#define TRANSFORMER_EXAMPLE "transformer:layers=24,hidden=2048,seq=1024,vocab=50257"
/* Layer boundaries are tagged with 11 bits (PLAN_MAX_BOUNDARY in plan.h). */
enum { MAX_LAYERS = 2047 };
/* Bounds that keep every product below 2^63 with room to spare. */
#define MAX_WIDTH 16777216LL   /* 2^24 features, tokens or vocabulary entries */

/* Byte counts are int64_t, and callers multiply the per-sample ones by a
 * batch. The width bound alone does not keep them small (a block's saved
 * activations grow as a*s^2: 5 * 2^24 * 2^48 bytes at the bounds), so a
 * model whose parameters or whose per-sample activations of one layer exceed
 * 2^53 bytes (8 PiB; also where doubles stop holding every integer) is
 * refused. Sizes are checked in double, before any integer is formed. */
#define MAX_BYTES 9007199254740992.0   /* 2^53 */

static int check_bytes(const char *spec, const char *what, double bytes, struct err *e)
{
    if (bytes <= MAX_BYTES) return 0;
    return err_set(e, ERR_INPUT, "'%s': too large: %s of %.3g bytes (at most 2^53 = %.3g); "
                   "use smaller sizes", spec, what, bytes, MAX_BYTES);
}

/* Parses a positive decimal integer <= max from [s, s+n); -1 when it is not one. */
static long long parse_positive(const char *s, size_t n, long long max)
{
    if (n == 0 || n > 18) return -1;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i])) return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v >= 1 && v <= max ? v : -1;
}

static int alloc_layers(struct workload *w, int n, struct err *e)
{
    w->layers = XCALLOC(e, (size_t)n, sizeof *w->layers);
    if (!w->layers) return ERR_NOMEM;
    w->n_layers = n;
    return 0;
}

static int parse_mlp(const char *spec, const char *body, struct workload *w, struct err *e)
{
    long long widths[MAX_LAYERS + 1];
    int n = 0;
    for (const char *p = body;;) {
        const char *dash = strchr(p, '-');
        size_t len = dash ? (size_t)(dash - p) : strlen(p);
        if (n > MAX_LAYERS)
            return err_set(e, ERR_INPUT, "'%s': more than %d layers", spec, MAX_LAYERS);
        long long v = parse_positive(p, len, MAX_WIDTH);
        if (v < 0)
            return err_set(e, ERR_INPUT,
                           "'%s': layer size '%.*s' is not an integer from 1 to %lld "
                           "(example: " MLP_EXAMPLE ")",
                           spec, (int)(len > 40 ? 40 : len), p, MAX_WIDTH);
        widths[n++] = v;
        if (!dash) break;
        p = dash + 1;
    }
    if (n < 2)
        return err_set(e, ERR_INPUT,
                       "'%s': an MLP needs an input size and at least one layer "
                       "(example: " MLP_EXAMPLE ")", spec);
    double param_bytes = 0;
    for (int i = 0; i < n - 1; i++)
        param_bytes += ((double)widths[i] * (double)widths[i + 1] + (double)widths[i + 1]) * 4;
    TRY(check_bytes(spec, "parameters", param_bytes, e));
    TRY(alloc_layers(w, n - 1, e));
    for (int i = 0; i < n - 1; i++) {
        double in = (double)widths[i], out = (double)widths[i + 1];
        struct layer *l = &w->layers[i];
        l->kind = LAYER_DENSE;
        l->in = widths[i];
        l->out = widths[i + 1];
        l->params = l->in * l->out + l->out;
        l->fwd_flops_per_sample = 2 * in * out + out;
        l->bwd_flops_per_sample = 2 * in * out + out + (i > 0 ? 2 * in * out : 0);
        l->out_bytes_per_sample = l->out * 4;
        l->saved_bytes_per_sample = (l->in + l->out) * 4;
    }
    w->is_mlp = true;
    w->elem_bytes = 4;
    w->in_bytes_per_sample = widths[0] * 4;
    w->n_classes = widths[n - 1];
    /* Rebuilt from the numbers, so that "mlp:0784-..." and "mlp:784-..." agree;
     * it is never longer than the spec, which fits. */
    size_t used = (size_t)snprintf(w->canonical, sizeof w->canonical, "mlp:%lld", widths[0]);
    for (int i = 1; i < n && used < sizeof w->canonical; i++)
        used += (size_t)snprintf(w->canonical + used, sizeof w->canonical - used, "-%lld",
                                 widths[i]);
    return 0;
}

struct tf_key {
    const char *name;
    long long value;   /* 0 = not given */
    long long max;
};

static int parse_transformer(const char *spec, const char *body, struct workload *w,
                             struct err *e)
{
    struct tf_key keys[] = {
        {"layers", 0, MAX_LAYERS - 2}, {"hidden", 0, MAX_WIDTH}, {"seq", 0, MAX_WIDTH},
        {"vocab", 0, MAX_WIDTH},        {"heads", 0, MAX_WIDTH},
    };
    const size_t n_keys = sizeof keys / sizeof keys[0];
    for (const char *p = body; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq)
            return err_set(e, ERR_INPUT,
                           "'%s': expected key=value, got '%.*s' (example: " TRANSFORMER_EXAMPLE ")",
                           spec, (int)(len > 40 ? 40 : len), p);
        size_t klen = (size_t)(eq - p);
        struct tf_key *k = NULL;
        for (size_t i = 0; i < n_keys; i++)
            if (strlen(keys[i].name) == klen && !strncmp(keys[i].name, p, klen)) k = &keys[i];
        if (!k)
            return err_set(e, ERR_INPUT,
                           "'%s': unknown key '%.*s' (keys: layers, hidden, seq, vocab, heads)",
                           spec, (int)(klen > 40 ? 40 : klen), p);
        if (k->value)
            return err_set(e, ERR_INPUT, "'%s': key '%s' given twice", spec, k->name);
        long long v = parse_positive(eq + 1, len - klen - 1, k->max);
        if (v < 0)
            return err_set(e, ERR_INPUT, "'%s': %s='%.*s' is not an integer from 1 to %lld",
                           spec, k->name, (int)(len - klen - 1 > 40 ? 40 : len - klen - 1),
                           eq + 1, k->max);
        k->value = v;
        p = comma ? comma + 1 : p + len;
        if (comma && !*p)
            return err_set(e, ERR_INPUT, "'%s': trailing comma", spec);
    }
    for (size_t i = 0; i < 4; i++)
        if (!keys[i].value)
            return err_set(e, ERR_INPUT, "'%s': missing %s= (example: " TRANSFORMER_EXAMPLE ")",
                           spec, keys[i].name);
    long long L = keys[0].value, h = keys[1].value, s = keys[2].value, V = keys[3].value;
    long long a = keys[4].value ? keys[4].value : (h >= 64 ? h / 64 : 1);
    if (h % a) {
        if (keys[4].value)
            return err_set(e, ERR_INPUT, "'%s': heads=%lld does not divide hidden=%lld", spec,
                           a, h);
        long long d = a;   /* the largest divisor of h not above the default */
        while (h % d) d--;
        return err_set(e, ERR_INPUT,
                       "'%s': the default heads (hidden/64 = %lld) does not divide hidden=%lld; "
                       "add heads= with a divisor of %lld (e.g. heads=%lld)", spec, a, h, h, d);
    }

    double hd = (double)h, sd = (double)s, Vd = (double)V, ad = (double)a;
    double block_saved = sd * hd * (34 + 5 * ad * sd / hd);
    double params = (double)L * (12 * hd * hd + 13 * hd) + (Vd * hd + sd * hd) + (Vd * hd + 2 * hd);
    /* The head's s*h*2 + s*V*4 saved bytes are at most 6 * 2^48 at the width bounds. */
    TRY(check_bytes(spec, "the activations one block saves per sample", block_saved, e));
    TRY(check_bytes(spec, "parameters", params * 2, e));

    TRY(alloc_layers(w, (int)L + 2, e));
    struct layer *emb = &w->layers[0];
    emb->kind = LAYER_EMBEDDING;
    emb->params = V * h + s * h;
    emb->out_bytes_per_sample = s * h * 2;
    emb->saved_bytes_per_sample = s * 4;
    for (long long i = 1; i <= L; i++) {
        struct layer *b = &w->layers[i];
        b->kind = LAYER_BLOCK;
        b->params = 12 * h * h + 13 * h;
        b->fwd_flops_per_sample = 24 * sd * hd * hd + 4 * sd * sd * hd;
        b->bwd_flops_per_sample = 2 * b->fwd_flops_per_sample;
        b->out_bytes_per_sample = s * h * 2;
        b->saved_bytes_per_sample = (int64_t)block_saved;
    }
    struct layer *head = &w->layers[L + 1];
    head->kind = LAYER_HEAD;
    head->params = V * h + 2 * h;
    head->fwd_flops_per_sample = 2 * sd * hd * Vd;
    head->bwd_flops_per_sample = 4 * sd * hd * Vd;
    head->out_bytes_per_sample = s * V * 2;
    head->saved_bytes_per_sample = s * h * 2 + s * V * 4;
    w->is_mlp = false;
    w->elem_bytes = 2;
    w->in_bytes_per_sample = s * 4;
    w->n_classes = V;
    snprintf(w->canonical, sizeof w->canonical,
             "transformer:layers=%lld,hidden=%lld,seq=%lld,vocab=%lld,heads=%lld", L, h, s, V, a);
    return 0;
}

static void list_presets(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < workload_n_presets && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "",
                                 workload_presets[i].name);
}

int workload_parse(const char *spec, struct workload **out, struct err *e)
{
    *out = NULL;
    if (!spec || !*spec)
        return err_set(e, ERR_INPUT, "empty model (example: " MLP_EXAMPLE ")");
    if (strlen(spec) >= sizeof((struct workload *)0)->spec)
        return err_set(e, ERR_INPUT, "model string of %zu characters is too long (255 at most)",
                       strlen(spec));
    const char *body = spec;
    for (size_t i = 0; i < workload_n_presets; i++)
        if (!strcmp(spec, workload_presets[i].name)) body = workload_presets[i].spec;

    struct workload *w = XCALLOC(e, 1, sizeof *w);
    if (!w) return ERR_NOMEM;
    snprintf(w->spec, sizeof w->spec, "%s", spec);
    int rc;
    if (!strncmp(body, "mlp:", 4)) {
        rc = parse_mlp(body, body + 4, w, e);
    } else if (!strncmp(body, "transformer:", 12)) {
        rc = parse_transformer(body, body + 12, w, e);
    } else {
        char presets[512];
        list_presets(presets, sizeof presets);
        rc = err_set(e, ERR_INPUT,
                     "'%s' is not a model: use mlp:IN-H1-...-OUT (e.g. " MLP_EXAMPLE
                     "), transformer:layers=L,hidden=H,seq=S,vocab=V, or a preset (%s)",
                     spec, presets);
    }
    if (rc < 0) {
        workload_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void workload_free(struct workload *w)
{
    if (!w) return;
    free(w->layers);
    free(w);
}

int64_t workload_params(const struct workload *w, int lo, int hi)
{
    int64_t sum = 0;
    for (int i = lo; i < hi; i++) sum += w->layers[i].params;
    return sum;
}

double workload_fwd_flops(const struct workload *w, int lo, int hi)
{
    double sum = 0;
    for (int i = lo; i < hi; i++) sum += w->layers[i].fwd_flops_per_sample;
    return sum;
}

double workload_bwd_flops(const struct workload *w, int lo, int hi)
{
    double sum = 0;
    for (int i = lo; i < hi; i++) sum += w->layers[i].bwd_flops_per_sample;
    return sum;
}

int64_t workload_param_bytes(const struct workload *w, int lo, int hi)
{
    return workload_params(w, lo, hi) * w->elem_bytes;
}

int64_t workload_boundary_bytes(const struct workload *w, int boundary)
{
    return boundary == 0 ? w->in_bytes_per_sample : w->layers[boundary - 1].out_bytes_per_sample;
}

void workload_describe(const struct workload *w, char *buf, size_t n)
{
    int64_t params = workload_params(w, 0, w->n_layers);
    double fwd = workload_fwd_flops(w, 0, w->n_layers);
    /* FLOPs in the largest SI prefix that keeps the number >= 1 */
    static const char *const prefixes[] = {"", "k", "M", "G", "T", "P"};
    int k = 0, b = 0;
    while (fwd >= 1000 && k < 5) fwd /= 1000, k++;
    double bytes = (double)params * w->elem_bytes;
    while (bytes >= 1000 && b < 5) bytes /= 1000, b++;
    snprintf(buf, n, "%s: %d layer%s, %" PRId64 " parameters (%.3g %sB as %s), "
             "%.3g %sFLOP forward per sample",
             w->canonical, w->n_layers, w->n_layers == 1 ? "" : "s", params, bytes, prefixes[b],
             w->elem_bytes == 4 ? "fp32" : "bf16", fwd, prefixes[k]);
}
