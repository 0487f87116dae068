/* Workloads: what one training step computes and moves, layer by layer.
 *
 *   mlp:784-256-128-10      dense layers (ReLU between, softmax cross-entropy
 *                           at the end), fp32; arithmetic can really be done
 *   transformer:layers=24,hidden=2048,seq=1024,vocab=50257[,heads=16]
 *                           sizes only (bf16 mixed precision), for timing
 *                           simulation of models too large to compute here
 *   a preset name           see workload_presets (e.g. "fmnist-small")
 *
 * Layers are what strategies cut: stages and buckets hold whole layers. */
#ifndef STRATA_WORKLOAD_H
#define STRATA_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

enum layer_kind {
    LAYER_DENSE,        /* y = act(x W + b); W (in,out), b (out) */
    LAYER_EMBEDDING,    /* token + position embedding lookup */
    LAYER_BLOCK,        /* transformer block: attention + MLP, 2 layer-norms */
    LAYER_HEAD,         /* final layer-norm + output projection to the vocabulary */
};

struct layer {
    enum layer_kind kind;
    int64_t in, out;                  /* dense: features in/out; others: 0 */
    int64_t params;                   /* trainable parameters (weights + biases) */
    double fwd_flops_per_sample;      /* forward FLOPs for one sample */
    double bwd_flops_per_sample;      /* backward FLOPs (input and weight grads) */
    int64_t out_bytes_per_sample;     /* the layer's output: what crosses a stage boundary */
    int64_t saved_bytes_per_sample;   /* activations kept from forward for backward */
};

struct workload {
    char spec[256];          /* as given, e.g. "mlp:784-256-128-10" or "fmnist-small" */
    char canonical[256];     /* expanded form, e.g. "mlp:784-256-128-10" */
    bool is_mlp;             /* true: nn/ can do the arithmetic; false: sizes only */
    int n_layers;
    struct layer *layers;    /* [n_layers], owned */
    int elem_bytes;          /* bytes per parameter, gradient and activation element */
    int64_t in_bytes_per_sample;  /* one input sample (what the first stage reads) */
    int64_t n_classes;       /* mlp: outputs (labels); transformer: vocab */
};

struct workload_preset {
    const char *name;        /* "fmnist-small" */
    const char *spec;        /* "mlp:784-256-128-10" */
    const char *summary;     /* one line for --help and errors */
};

extern const struct workload_preset workload_presets[];
extern const size_t workload_n_presets;

/* Parses spec (a preset name or an mlp:/transformer: string) into a new
 * workload. Bad specs give ERR_INPUT with a message that quotes the spec,
 * says what part is wrong and shows a correct example. */
int workload_parse(const char *spec, struct workload **out, struct err *e);
void workload_free(struct workload *w);

/* Sums over layers [lo, hi). */
int64_t workload_params(const struct workload *w, int lo, int hi);
double workload_fwd_flops(const struct workload *w, int lo, int hi);  /* per sample */
double workload_bwd_flops(const struct workload *w, int lo, int hi);  /* per sample */

/* Bytes of the parameters (= of the gradients) of layers [lo, hi). */
int64_t workload_param_bytes(const struct workload *w, int lo, int hi);

/* Bytes per sample of the tensor that enters layer `boundary` (its input):
 * the input sample for boundary 0, otherwise the output of layer boundary-1.
 * This is what a pipeline sends forward across that boundary (and the size
 * of the gradient it sends back). */
int64_t workload_boundary_bytes(const struct workload *w, int boundary);

/* A one-line description: "mlp:784-256-128-10: 3 layers, 235146 parameters, ..." */
void workload_describe(const struct workload *w, char *buf, size_t n);

#endif
