/* real/host_copy.c and the mpi comm's host copies (real/comm_mpi.c), on any
 * machine: a "staged cpu" device, the cpu device's table with
 * is_host_memory false and a copy that counts its calls, stands in for a
 * GPU, so the paths a cuda rank takes through MPI run here too. The comm
 * tests run MPI as a singleton (one rank, no mpirun): a rank sends to
 * itself, and an all-reduce over a group of one is the identity. */
#include <criterion/criterion.h>
#include <mpi.h>
#include <string.h>

#include "../core/untracked.h"
#include "../core/workload.h"
#include "../real/comm.h"
#include "../real/host_copy.h"

static int copies[3];   /* by enum dev_copy */
static struct device staged;

static void counting_copy(void *dst, const void *src, size_t bytes, enum dev_copy kind)
{
    copies[kind]++;
    memcpy(dst, src, bytes);
}

static const struct device *staged_device(void)
{
    struct err e = {0};
    const struct device *cpu = device_find("cpu", &e);
    cr_assert_not_null(cpu, "%s", e.msg);
    cr_assert_eq(cpu->init(0, &e), 0, "%s", e.msg);
    staged = *cpu;
    staged.name = "staged-cpu";
    staged.is_host_memory = false;
    staged.copy = counting_copy;
    memset(copies, 0, sizeof copies);
    return &staged;
}

/* ---- host_copy ------------------------------------------------------------- */

Test(host_copy, host_memory_is_used_as_it_is_and_nothing_is_copied)
{
    struct err e = {0};
    const struct device *cpu = device_find("cpu", &e);
    struct host_copy s = {0};
    float buf[4] = {1, 2, 3, 4};
    cr_expect_eq(host_copy_out(cpu, &s, buf, sizeof buf, &e), buf);
    cr_expect_eq(host_copy_in(cpu, &s, buf, sizeof buf, &e), buf);
    host_copy_in_done(cpu, &s, buf, sizeof buf);
    cr_expect_null(s.host, "a cpu rank needs no host copy");
    host_copy_release(&s);
}

Test(host_copy, device_memory_goes_out_and_in_through_one_reused_host_copy)
{
    struct err e = {0};
    const struct device *d = staged_device();
    struct host_copy s = {0};
    float dev[8] = {1, 2, 3, 4, 5, 6, 7, 8}, back[8] = {0};
    const float *out = host_copy_out(d, &s, dev, sizeof dev, &e);
    cr_assert_not_null(out, "%s", e.msg);
    cr_expect_neq(out, dev, "MPI must get a host copy, not the device pointer");
    cr_expect_eq(memcmp(out, dev, sizeof dev), 0);
    cr_expect_eq(copies[DEV_D2H], 1);
    /* a smaller transfer reuses the buffer; receiving fills it, done copies it in */
    float *in = host_copy_in(d, &s, back, 4 * sizeof(float), &e);
    cr_expect_eq(in, out, "the buffer is reused, not reallocated");
    cr_expect_eq(copies[DEV_H2D], 0, "host_copy_in copies nothing before the data arrives");
    for (int i = 0; i < 4; i++) in[i] = 10.0f + (float)i;
    host_copy_in_done(d, &s, back, 4 * sizeof(float));
    cr_expect_eq(copies[DEV_H2D], 1);
    for (int i = 0; i < 4; i++) cr_expect_eq(back[i], 10.0f + (float)i);
    cr_expect_eq(back[4], 0.0f, "only the bytes received are copied");
    /* a larger one grows it */
    float big[64] = {0};
    cr_expect_not_null(host_copy_out(d, &s, big, sizeof big, &e));
    cr_expect_geq(s.cap, sizeof big);
    host_copy_release(&s);
    host_copy_release(&s);   /* twice is fine: released is zeroed */
}

/* ---- the mpi comm on device buffers ------------------------------------------------ */

static struct workload *wl;
static struct plan *plan;

static void mpi_up(void)
{
    struct err e = {0};
    UNTRACKED_BEGIN();
    int rc = MPI_Init(NULL, NULL);
    UNTRACKED_END();
    cr_assert_eq(rc, MPI_SUCCESS, "MPI_Init as a singleton failed");
    cr_assert_eq(workload_parse("mlp:4-3-2", &wl, &e), 0, "%s", e.msg);
    plan = plan_create("test", wl, 1, 0, 1, 1, &e);
    cr_assert_not_null(plan, "%s", e.msg);
    int me = 0;
    cr_assert_eq(plan_add_group(plan, &me, 1), 0);
}

static void mpi_down(void)
{
    plan_free(plan);
    workload_free(wl);
    UNTRACKED_BEGIN();
    MPI_Finalize();
    UNTRACKED_END();
}

TestSuite(comm_mpi_staged, .init = mpi_up, .fini = mpi_down, .timeout = 60);

Test(comm_mpi_staged, a_message_to_itself_arrives_in_device_memory_on_completion)
{
    struct err e = {0};
    struct comm c = {.dev = staged_device()};
    const struct comm_ops *ops = comm_find("mpi", &e);
    cr_assert_not_null(ops, "%s", e.msg);
    cr_assert_eq(ops->open(&c, plan, &e), 0, "%s", e.msg);
    float src[5] = {1, 2, 3, 4, 5}, dst[5] = {0};
    struct comm_req rs = {0}, rr = {0};
    uint32_t tag = plan_tag(TAG_ACT, 1, 0);
    cr_assert_eq(ops->irecv(&c, dst, sizeof dst, 0, tag, &rr, &e), 0, "%s", e.msg);
    cr_assert_eq(ops->isend(&c, src, sizeof src, 0, tag, &rs, &e), 0, "%s", e.msg);
    cr_expect_eq(copies[DEV_D2H], 1, "the send copies its buffer out when it starts");
    cr_assert_eq(ops->wait(&c, &rs, &e), 0, "%s", e.msg);
    cr_assert_eq(ops->wait(&c, &rr, &e), 0, "%s", e.msg);
    cr_expect_eq(copies[DEV_H2D], 1, "the receive copies in when it completes");
    for (int i = 0; i < 5; i++) cr_expect_eq(dst[i], src[i], "dst[%d] = %g", i, dst[i]);
    cr_expect_eq(c.copies.len, 2, "one host copy per request in flight");
    cr_expect(!c.copies.items[0]->is_busy && !c.copies.items[1]->is_busy);
    ops->close(&c);
}

Test(comm_mpi_staged, an_all_reduce_goes_out_and_back_and_reuses_the_host_copy)
{
    struct err e = {0};
    struct comm c = {.dev = staged_device()};
    const struct comm_ops *ops = comm_find("mpi", &e);
    cr_assert_eq(ops->open(&c, plan, &e), 0, "%s", e.msg);
    float g[3] = {0.5f, -1.5f, 2.0f};
    for (int round = 0; round < 3; round++) {
        struct comm_req r = {0};
        bool done = false;
        cr_assert_eq(ops->iallreduce_sum(&c, g, 3, 0, &r, &e), 0, "%s", e.msg);
        while (!done) cr_assert_eq(ops->test(&c, &r, &done, &e), 0, "%s", e.msg);
        cr_expect(!r.is_active && !r.copy);
    }
    /* one rank: the sum is the buffer itself, after a trip through the host */
    cr_expect(g[0] == 0.5f && g[1] == -1.5f && g[2] == 2.0f);
    cr_expect_eq(copies[DEV_D2H], 3);
    cr_expect_eq(copies[DEV_H2D], 3);
    cr_expect_eq(c.copies.len, 1, "rounds one after another share one host copy");
    ops->close(&c);
}

Test(comm_mpi_staged, cpu_buffers_go_to_mpi_as_they_are)
{
    struct err e = {0};
    struct comm c = {.dev = device_find("cpu", &e)};
    const struct comm_ops *ops = comm_find("mpi", &e);
    cr_assert_eq(ops->open(&c, plan, &e), 0, "%s", e.msg);
    float g[2] = {1, 2};
    struct comm_req r = {0};
    cr_assert_eq(ops->iallreduce_sum(&c, g, 2, 0, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(ops->wait(&c, &r, &e), 0, "%s", e.msg);
    cr_expect_eq(c.copies.len, 0, "no host copy for host memory");
    ops->close(&c);
}

Test(comm_mpi_staged, auto_is_mpi_on_the_cpu_and_nccl_asks_for_cuda)
{
    struct err e = {0};
    const struct device *cpu = device_find("cpu", &e);
    const struct comm_ops *ops = comm_choose("auto", cpu, cpu, &e);
    cr_assert_not_null(ops, "%s", e.msg);
    cr_expect_str_eq(ops->name, "mpi");
    cr_expect_null(comm_choose("nccl", cpu, cpu, &e));
    cr_expect_eq(e.code, ERR_INPUT);
#ifdef STRATA_HAVE_NCCL
    cr_expect_not_null(strstr(e.msg, "needs --device cuda"), "%s", e.msg);
#else
    cr_expect_not_null(strstr(e.msg, "this build has: mpi)"), "%s", e.msg);
#endif
    cr_expect_null(comm_choose("carrier-pigeon", cpu, cpu, &e));
    cr_expect_eq(e.code, ERR_INPUT);
}
