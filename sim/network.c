/* Shared links by processor sharing with a virtual clock per link.
 *
 * While n transfers share a link of bandwidth bw, each moves at bw / n bytes
 * per second. The link's virtual clock V counts the bytes one active transfer
 * has received so far, so it advances at bw / n; a transfer of `bytes`
 * entering when the clock reads V0 is done when V reaches V0 + bytes,
 * whatever starts and finishes in between. Transfers sit in a per-link
 * min-heap of finish_v; the earliest one is due at
 *     t = t_last + (finish_v_min - V) * n / bw,
 * and that is the link's one event in the queue. Most transfers arrive in
 * finish order already (a wave of equal messages to one server: each
 * starts later, at a larger V, for the same bytes), so a transfer that
 * finishes no earlier than the last one queued goes to a FIFO instead, O(1)
 * both ways, and the heap holds only the others; the earliest of the two
 * fronts is the link's next. A start changes n, so it
 * re-times the link: it bumps the generation and pushes a new event; the old
 * one pops later as stale and is dropped (at most one stale event per start).
 *
 * A finished transfer is handed back through a second event latency_s later
 * (a = -1 - link, b = cookie), so each call returns at most one cookie. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "binary_heap.h"
#include "network.h"

struct xfer {
    double finish_v;   /* V at which the last byte leaves */
    uint64_t seq;      /* start order: the tie-break */
    int64_t cookie;
};

struct link {
    double bw_bytes_per_s;
    double latency_s;
    double v;          /* virtual clock, bytes; valid at t_last */
    double t_last_s;
    int64_t generation;   /* b of the one live finish event */
    VEC(struct xfer) active;   /* min-heap on (finish_v, seq): those out of order */
    /* in (finish_v, seq) order: items[head .. len); head returns to 0 when
     * it empties, and the live part moves down when it must grow */
    struct {
        struct xfer *items;
        size_t head, len, cap;
    } fifo;
};

struct network {
    int n_links;
    int32_t event_kind;
    uint64_t next_seq;
    uint64_t n_touched;   /* per-link heap levels moved and transfers handed back */
    struct link *links;
    VEC(struct xfer) done;   /* the transfers one finish event ends */
};

/* --- the per-link heap (binary_heap.h): earliest finish first --- */

static inline bool xfer_before(const struct xfer *x, const struct xfer *y)
{
    return x->finish_v < y->finish_v || (x->finish_v == y->finish_v && x->seq < y->seq);
}

BINARY_HEAP(xheap, struct xfer, xfer_before)

/* --- a link's transfers: the FIFO and the heap together --- */

static size_t n_active_of(const struct link *l)
{
    return l->active.len + (l->fifo.len - l->fifo.head);
}

/* The earliest transfer of a link that has one. */
static const struct xfer *earliest(const struct link *l)
{
    const struct xfer *f = l->fifo.head < l->fifo.len ? &l->fifo.items[l->fifo.head] : NULL;
    if (l->active.len == 0) return f;
    if (!f || xfer_before(&l->active.items[0], f)) return &l->active.items[0];
    return f;
}

/* Room for one more transfer on l, whichever store takes it: 0, ERR_NOMEM. */
static int reserve_one(struct link *l)
{
    TRY(vec_reserve(&l->active, l->active.len + 1));
    if (l->fifo.len < l->fifo.cap) return 0;
    size_t live = l->fifo.len - l->fifo.head;
    if (l->fifo.head > 0 && live < l->fifo.cap / 2) {
        memmove(l->fifo.items, l->fifo.items + l->fifo.head, live * sizeof *l->fifo.items);
        l->fifo.head = 0;
        l->fifo.len = live;
        return 0;
    }
    size_t cap = l->fifo.cap ? 2 * l->fifo.cap : 16;
    struct xfer *grown = realloc(l->fifo.items, cap * sizeof *grown);
    if (!grown) return ERR_NOMEM;
    l->fifo.items = grown;
    l->fifo.cap = cap;
    return 0;
}

/* Adds x (room reserved); the heap levels moved. */
static size_t add_xfer(struct link *l, struct xfer x)
{
    if (l->fifo.head == l->fifo.len ||
        !xfer_before(&x, &l->fifo.items[l->fifo.len - 1])) {
        if (l->fifo.head == l->fifo.len) l->fifo.head = l->fifo.len = 0;
        l->fifo.items[l->fifo.len++] = x;
        return 0;
    }
    return xheap_push(l->active.items, &l->active.len, x);
}

/* Removes the earliest transfer into *out; the heap levels moved. */
static size_t take_earliest(struct link *l, struct xfer *out)
{
    bool has_fifo = l->fifo.head < l->fifo.len;
    if (has_fifo && (l->active.len == 0 ||
                     !xfer_before(&l->active.items[0], &l->fifo.items[l->fifo.head]))) {
        *out = l->fifo.items[l->fifo.head++];
        return 0;
    }
    size_t moved = xheap_pop_to_tail(l->active.items, &l->active.len);
    *out = l->active.items[l->active.len];
    return moved;
}

/* --- life cycle --- */

struct network *network_create(int n_links, int32_t event_kind, struct err *e)
{
    if (n_links < 0) {
        err_set(e, ERR_RUN, "network: %d links (need 0 or more)", n_links);
        return NULL;
    }
    struct network *n = XCALLOC(e, 1, sizeof *n);
    if (!n) return NULL;
    n->n_links = n_links;
    n->event_kind = event_kind;
    if (n_links > 0) {
        n->links = XCALLOC(e, (size_t)n_links, sizeof *n->links);
        if (!n->links) goto fail;
    }
    for (int i = 0; i < n_links; i++) n->links[i].bw_bytes_per_s = INFINITY;
    return n;
fail:
    network_free(n);
    return NULL;
}

void network_free(struct network *n)
{
    if (!n) return;
    for (int i = 0; i < n->n_links && n->links; i++) {
        vec_free(&n->links[i].active);
        free(n->links[i].fifo.items);
    }
    free(n->links);
    vec_free(&n->done);
    free(n);
}

void network_set_link(struct network *n, int link, double bw_bytes_per_s, double latency_s)
{
    if (link < 0 || link >= n->n_links) return;
    n->links[link].bw_bytes_per_s = bw_bytes_per_s;
    n->links[link].latency_s = latency_s;
}

uint64_t network_touched(const struct network *n)
{
    return n ? n->n_touched : 0;
}

int network_active(const struct network *n, int link)
{
    if (link < 0 || link >= n->n_links) return 0;
    return (int)n_active_of(&n->links[link]);
}

/* --- transfers --- */

/* When a transfer finishing at finish_v leaves a link shared by n_active,
 * as seen from (t_last, V). Never before t_last: a start at the very instant
 * a transfer is due can leave V a rounding error past its finish_v. */
static double finish_time_s(const struct link *l, double finish_v, size_t n_active)
{
    double left_bytes = finish_v - l->v;
    if (left_bytes < 0) left_bytes = 0;
    return l->t_last_s + left_bytes * (double)n_active / l->bw_bytes_per_s;
}

int network_start(struct network *n, struct des *q, double now_s, int link, int64_t bytes,
                  int64_t cookie)
{
    if (link < 0 || link >= n->n_links || bytes < 0 || isnan(now_s)) return ERR_RUN;
    struct link *l = &n->links[link];
    if (!(l->bw_bytes_per_s > 0) || !(l->latency_s >= 0)) return ERR_RUN;

    /* Free transfers take no share of the link. */
    if (bytes == 0 || isinf(l->bw_bytes_per_s))
        return des_push(q, now_s + l->latency_s, n->event_kind, -1 - link, cookie);

    size_t n_active = n_active_of(l);
    if (n_active > 0 && now_s < l->t_last_s) return ERR_RUN;
    TRY(reserve_one(l));

    /* Bring V to now at the old sharing. An idle link restarts V at 0, so V
     * stays the size of one busy period and its rounding stays small. Both
     * only re-express the link's state, so a failure below leaves it intact. */
    if (n_active == 0)
        l->v = 0;
    else
        l->v += (now_s - l->t_last_s) * l->bw_bytes_per_s / (double)n_active;
    l->t_last_s = now_s;

    struct xfer x = { .finish_v = l->v + (double)bytes, .seq = n->next_seq, .cookie = cookie };
    double first_v = x.finish_v;
    if (n_active > 0 && earliest(l)->finish_v < first_v) first_v = earliest(l)->finish_v;
    TRY(des_push(q, finish_time_s(l, first_v, n_active + 1), n->event_kind, link,
                 l->generation + 1));
    n->n_touched += add_xfer(l, x);
    n->next_seq++;
    l->generation++;
    return 0;
}

int network_on_event(struct network *n, struct des *q, const struct des_event *ev,
                     int64_t *cookie)
{
    if (ev->kind != n->event_kind) return ERR_RUN;

    /* A transfer's data has reached the receiver. */
    if (ev->a < 0) {
        if (-1 - (int64_t)ev->a >= n->n_links) return ERR_RUN;
        *cookie = ev->b;
        return 1;
    }

    if (ev->a >= n->n_links) return ERR_RUN;
    struct link *l = &n->links[ev->a];
    size_t n_active = n_active_of(l);
    if (ev->b != l->generation || n_active == 0) return 0;   /* re-timed since */

    /* Room for every push below (one arrival per active transfer and the
     * next finish event), and for the finished transfers, so none of them
     * can fail half-way. */
    TRY(des_reserve(q, n_active + 1));
    TRY(vec_reserve(&n->done, n_active));

    /* The event is live, so nothing has changed on the link since it was
     * timed: the earliest transfer is done by definition. Set V to its
     * finish_v exactly rather than re-deriving it from the time, so rounding
     * does not build up over a long busy period. */
    double fv = earliest(l)->finish_v;
    if (fv > l->v) l->v = fv;
    l->t_last_s = ev->time_s;

    /* Transfers that finish together in exact arithmetic can differ here by
     * rounding: finish_v = V + bytes, where V is a sum of products, each a
     * few ulps off, and the times V was advanced to are themselves rounded,
     * to an ulp of the clock, during which the link serves ulp(t) * bw / n
     * bytes. Within that margin two finishes are one instant, so they leave
     * together; otherwise the later would get its own event an ulp or so
     * later, at a sharing that differs from the truth by one transfer. The
     * relative 1e-12 covers thousands of roundings of V and is far below any
     * byte count that matters (V is at most one busy period's bytes). */
    double tol_bytes = 1e-12 * fabs(l->v)
                     + 4 * DBL_EPSILON * fabs(ev->time_s) * l->bw_bytes_per_s / (double)n_active;
    struct xfer *done = n->done.items;
    size_t n_done = 0;
    n->n_touched += take_earliest(l, &done[n_done++]);
    while (n_active_of(l) > 0 && earliest(l)->finish_v <= l->v + tol_bytes)
        n->n_touched += take_earliest(l, &done[n_done++]);

    /* The finished transfers, in the order they were taken. Exact ties are
     * taken in start order; insertion sort (linear on that input) makes
     * near-ties agree, and the arrivals are pushed in start order. */
    n->n_touched += n_done;
    for (size_t i = 1; i < n_done; i++) {
        struct xfer x = done[i];
        size_t j = i;
        while (j > 0 && done[j - 1].seq > x.seq) {
            done[j] = done[j - 1];
            j--;
        }
        done[j] = x;
    }
    double arrive_s = ev->time_s + l->latency_s;
    for (size_t i = 0; i < n_done; i++)
        TRY(des_push(q, arrive_s, n->event_kind, -1 - ev->a, done[i].cookie));

    size_t n_left = n_active_of(l);
    if (n_left > 0) {
        TRY(des_push(q, finish_time_s(l, earliest(l)->finish_v, n_left), n->event_kind, ev->a,
                     l->generation + 1));
        l->generation++;
    }
    return 0;
}
