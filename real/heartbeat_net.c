/* Heartbeats over TCP (heartbeat_net.h): a rank's connection and its
 * watcher thread, and the supervisor's listener. */
#define _GNU_SOURCE   /* accept4, SOCK_CLOEXEC; before any header */

#include "heartbeat_net.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* --- a rank's side --- */

struct hbnet_link {
    int fd;
    pthread_t watcher;
    bool has_watcher;
    atomic_bool is_closing;     /* our own close: the watcher's EOF is no death */
};

/* "ADDR:PORT" (or "[V6]:PORT") into host and port; false when malformed. */
static bool split_endpoint(const char *endpoint, char *host, size_t n, char *port, size_t m)
{
    const char *colon = strrchr(endpoint, ':');
    if (!colon || colon == endpoint || !colon[1] || strlen(colon + 1) >= m) return false;
    const char *lo = endpoint, *hi = colon;
    if (*lo == '[' && hi[-1] == ']') {
        lo++;
        hi--;
    }
    if (hi <= lo || (size_t)(hi - lo) >= n) return false;
    memcpy(host, lo, (size_t)(hi - lo));
    host[hi - lo] = '\0';
    snprintf(port, m, "%s", colon + 1);
    return true;
}

/* Blocks on the connection, which the supervisor never writes to: its end
 * (EOF or an error) means the supervisor is gone, and so is this rank, as
 * a rank on the supervisor's machine dies with its launcher. */
static void *watch_supervisor(void *arg)
{
    struct hbnet_link *l = arg;
    char c;
    ssize_t n;
    do n = recv(l->fd, &c, 1, 0);
    while (n > 0 || (n < 0 && errno == EINTR));
    if (!atomic_load(&l->is_closing)) {
        static const char msg[] = "strata real: the supervisor's connection closed (it is "
                                  "gone); this rank ends\n";
        ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)w;
        raise(SIGKILL);
    }
    return NULL;
}

int hbnet_link_open(const char *endpoint, struct hbnet_link **out, struct err *e)
{
    *out = NULL;
    char host[256], port[16];
    if (!split_endpoint(endpoint, host, sizeof host, port, sizeof port))
        return err_set(e, ERR_INPUT, HEARTBEAT_NET_ENV "=%s: not ADDR:PORT", endpoint);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0)
        return err_set(e, ERR_IO, HEARTBEAT_NET_ENV "=%s: %s", endpoint, gai_strerror(gai));
    int fd = -1, why = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
            why = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        return err_set(e, ERR_IO, HEARTBEAT_NET_ENV "=%s: cannot reach the supervisor: %s "
                       "(is --supervisor-address reachable from this host?)", endpoint,
                       strerror(why ? why : errno));
    int one = 1;   /* a beat is small and wanted now, not batched */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct hbnet_link *l = XCALLOC(e, 1, sizeof *l);
    if (!l) {
        close(fd);
        return ERR_NOMEM;
    }
    l->fd = fd;
    atomic_init(&l->is_closing, false);
    l->has_watcher = pthread_create(&l->watcher, NULL, watch_supervisor, l) == 0;
    *out = l;
    return 0;
}

void hbnet_link_send(struct hbnet_link *l, const struct heartbeat_record *rec, bool must_arrive)
{
    struct heartbeat_wire w = {.rec = *rec, .sent_s = heartbeat_clock_s()};
    const char *p = (const char *)&w;
    size_t left = sizeof w;
    /* all or nothing when it may not block: a part sent would shift every
     * later record on the stream, so a dropped beat is dropped whole */
    int flags = MSG_NOSIGNAL | (must_arrive ? 0 : MSG_DONTWAIT);
    while (left > 0) {
        ssize_t n = send(l->fd, p, left, flags);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        p += n;
        left -= (size_t)n;
        flags &= ~MSG_DONTWAIT;   /* begun: the rest must follow */
    }
}

void hbnet_link_close(struct hbnet_link *l)
{
    if (!l) return;
    atomic_store(&l->is_closing, true);
    shutdown(l->fd, SHUT_RDWR);   /* ends the watcher's recv */
    if (l->has_watcher) pthread_join(l->watcher, NULL);
    close(l->fd);
    free(l);
}

/* --- the supervisor's side --- */

struct conn {
    int fd;                      /* -1: closed */
    int rank;                    /* -1 until its first record */
    double offset_s;             /* smallest arrival - sent_s so far */
    size_t have;                 /* bytes of buf filled */
    struct heartbeat_wire buf;
};

struct rank_link {
    bool was_open, is_closed;
    double closed_s;
    int file;                    /* hb_dir/rank-R, -1 before its first record */
};

struct hbnet_listener {
    int fd;
    char endpoint[300];
    const char *hb_dir;
    int n_ranks;
    struct rank_link *ranks;     /* [n_ranks] */
    struct conn *conns;          /* [max_conns]; fd -1 = free */
    int max_conns;
};

int hbnet_resolve_address(const char *text, char *numeric, size_t n, struct err *e)
{
    char name[256];
    const char *host = text;
    if (!text || !*text) {
        if (gethostname(name, sizeof name) < 0)
            return err_set(e, ERR_INPUT, "--supervisor-address: this host's name cannot be "
                           "read (%s); give the address the hosts reach this one by",
                           strerror(errno));
        name[sizeof name - 1] = '\0';
        host = name;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int gai = getaddrinfo(host, NULL, &hints, &res);
    if (gai != 0)
        return err_set(e, ERR_INPUT, "--supervisor-address %s: %s%s; give an address of this "
                       "host that every host of the hostfile reaches (e.g. 10.0.0.5)",
                       text && *text ? text : "(default)", gai_strerror(gai),
                       text && *text ? "" : " (this host's name does not resolve)");
    /* a bind on it tells whether it is one of this host's */
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool is_ours = fd >= 0 && bind(fd, res->ai_addr, res->ai_addrlen) == 0;
    int why = errno;
    if (fd >= 0) close(fd);
    int rc = getnameinfo(res->ai_addr, res->ai_addrlen, numeric, (socklen_t)n, NULL, 0,
                         NI_NUMERICHOST);
    freeaddrinfo(res);
    if (rc != 0) return err_set(e, ERR_INPUT, "--supervisor-address %s: %s", host,
                                gai_strerror(rc));
    if (!is_ours)
        return err_set(e, ERR_INPUT, "--supervisor-address %s: %s is not an address of this "
                       "host (%s); give one of its own that every host reaches", host, numeric,
                       strerror(why));
    return 0;
}

int hbnet_listen(const char *address, int n_ranks, const char *hb_dir,
                 struct hbnet_listener **out, struct err *e)
{
    *out = NULL;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST}, *res = NULL;
    int gai = getaddrinfo(address, "0", &hints, &res);
    if (gai != 0) return err_set(e, ERR_IO, "%s: %s", address, gai_strerror(gai));
    struct hbnet_listener *l = XCALLOC(e, 1, sizeof *l);
    if (!l) {
        freeaddrinfo(res);
        return ERR_NOMEM;
    }
    l->fd = -1;
    l->hb_dir = hb_dir;
    l->n_ranks = n_ranks;
    /* every rank once, and as many strangers or stale connections again */
    l->max_conns = 2 * n_ranks + 8;
    l->ranks = XCALLOC(e, (size_t)n_ranks, sizeof *l->ranks);
    l->conns = l->ranks ? XCALLOC(e, (size_t)l->max_conns, sizeof *l->conns) : NULL;
    int rc = 0;
    if (!l->conns) {
        rc = ERR_NOMEM;
        goto fail;
    }
    for (int r = 0; r < n_ranks; r++) l->ranks[r].file = -1;
    for (int i = 0; i < l->max_conns; i++) l->conns[i].fd = -1;
    l->fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_storage bound;
    socklen_t len = sizeof bound;
    char port[16];
    if (l->fd < 0 || bind(l->fd, res->ai_addr, res->ai_addrlen) < 0 ||
        listen(l->fd, n_ranks + 8) < 0 ||
        getsockname(l->fd, (struct sockaddr *)&bound, &len) < 0 ||
        getnameinfo((struct sockaddr *)&bound, len, NULL, 0, port, sizeof port,
                    NI_NUMERICSERV) != 0) {
        rc = err_set(e, ERR_IO, "cannot listen for the ranks' heartbeats on %s: %s", address,
                     strerror(errno));
        goto fail;
    }
    bool is_v6 = strchr(address, ':') != NULL;
    snprintf(l->endpoint, sizeof l->endpoint, is_v6 ? "[%s]:%s" : "%s:%s", address, port);
    freeaddrinfo(res);
    *out = l;
    return 0;
fail:
    freeaddrinfo(res);
    hbnet_listener_free(l);
    return rc;
}

const char *hbnet_endpoint(const struct hbnet_listener *l)
{
    return l->endpoint;
}

int hbnet_pollfds(const struct hbnet_listener *l, struct pollfd *pfds, int max)
{
    int k = 0;
    if (k < max) pfds[k++] = (struct pollfd){.fd = l->fd, .events = POLLIN};
    for (int i = 0; i < l->max_conns && k < max; i++)
        if (l->conns[i].fd >= 0) pfds[k++] = (struct pollfd){.fd = l->conns[i].fd, .events = POLLIN};
    return k;
}

static void accept_all(struct hbnet_listener *l)
{
    for (;;) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR) continue;
            return;   /* EAGAIN: none waiting (or an error the next poll sees again) */
        }
        int i = 0;
        while (i < l->max_conns && l->conns[i].fd >= 0) i++;
        if (i == l->max_conns) {   /* more than any job of ours makes: not ours */
            close(fd);
            continue;
        }
        l->conns[i] = (struct conn){.fd = fd, .rank = -1, .offset_s = 1e300};
    }
}

/* A whole record of c arrived at now_s: onto our clock, into its rank's
 * file. false when it is not a record of this job (the connection is dropped). */
static bool take_record(struct hbnet_listener *l, struct conn *c, double now_s)
{
    struct heartbeat_wire *w = &c->buf;
    struct heartbeat_record rec = w->rec;
    if (rec.magic != HEARTBEAT_MAGIC || rec.rank < 0 || rec.rank >= l->n_ranks ||
        (c->rank >= 0 && rec.rank != c->rank))
        return false;
    if (c->rank < 0) {   /* its first: this connection is the rank's now */
        c->rank = rec.rank;
        l->ranks[rec.rank] = (struct rank_link){.was_open = true, .file = l->ranks[rec.rank].file};
    }
    if (now_s - w->sent_s < c->offset_s) c->offset_s = now_s - w->sent_s;
    rec.progress_s += c->offset_s;
    if (rec.start_s > 0) rec.start_s += c->offset_s;
    rec.words[sizeof rec.words - 1] = '\0';
    struct rank_link *r = &l->ranks[rec.rank];
    if (r->file < 0) {
        char path[4200];
        snprintf(path, sizeof path, "%s/rank-%d", l->hb_dir, rec.rank);
        r->file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    }
    /* one write of the whole record: heartbeat_read, in this process, never
     * meets half of it */
    if (r->file >= 0) {
        ssize_t n = pwrite(r->file, &rec, sizeof rec, 0);
        (void)n;
    }
    return true;
}

/* Closes connection c; true when it was a rank's (a death, or its end). */
static bool drop(struct hbnet_listener *l, struct conn *c, double now_s)
{
    close(c->fd);
    c->fd = -1;
    if (c->rank < 0) return false;
    struct rank_link *r = &l->ranks[c->rank];
    r->is_closed = true;
    r->closed_s = now_s;
    return true;
}

bool hbnet_pump(struct hbnet_listener *l)
{
    accept_all(l);
    bool has_closed = false;
    for (int i = 0; i < l->max_conns; i++) {
        struct conn *c = &l->conns[i];
        while (c->fd >= 0) {
            ssize_t n = recv(c->fd, (char *)&c->buf + c->have, sizeof c->buf - c->have, 0);
            double now_s = heartbeat_clock_s();
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
            if (n <= 0) {   /* EOF, or reset: the rank's process is gone */
                has_closed |= drop(l, c, now_s);
                break;
            }
            c->have += (size_t)n;
            if (c->have < sizeof c->buf) continue;
            c->have = 0;
            if (!take_record(l, c, now_s)) has_closed |= drop(l, c, now_s);
        }
    }
    return has_closed;
}

bool hbnet_is_closed(const struct hbnet_listener *l, int rank, double *closed_s)
{
    if (rank < 0 || rank >= l->n_ranks || !l->ranks[rank].is_closed) return false;
    /* a newer connection of the same rank (none in one job) would reopen it */
    for (int i = 0; i < l->max_conns; i++)
        if (l->conns[i].fd >= 0 && l->conns[i].rank == rank) return false;
    if (closed_s) *closed_s = l->ranks[rank].closed_s;
    return true;
}

void hbnet_listener_free(struct hbnet_listener *l)
{
    if (!l) return;
    for (int i = 0; l->conns && i < l->max_conns; i++)
        if (l->conns[i].fd >= 0) close(l->conns[i].fd);
    for (int r = 0; l->ranks && r < l->n_ranks; r++)
        if (l->ranks[r].file >= 0) close(l->ranks[r].file);
    if (l->fd >= 0) close(l->fd);
    free(l->conns);
    free(l->ranks);
    free(l);
}
