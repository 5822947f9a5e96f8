/* comm_mpi.c -- comm_impl.h over MPI (a grip-host built with GRIP_WITH_MPI). Every collective is non-blocking and
 * polled against the communicator's timeout, so that no rank waits for ever on one that died or never came. */
#define _POSIX_C_SOURCE 200809L
#include "shard/comm_impl.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the largest piece a single collective moves: MPI counts are int */
#define PIECE_BYTES (1u << 30)

typedef struct mpi_state {
    MPI_Op merge_hits; /* shard_merge as a commutative MPI operation */
} mpi_state;

static void say_mpi_error(const shard_comm *c, int rc, const char *what, const char *step)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "grip-host: rank %d (host %s): %s in step '%s' failed: %s\n", c->rank, c->host, what, step, text);
}

/* Polls req until it completes or the timeout passes; a timeout ends the job (the waiting rank cannot know
 * whether the others will ever come). 0, or -1 after an MPI error. */
static int wait_bounded(shard_comm *c, MPI_Request *req, const char *what, const char *step)
{
    struct timespec t0, now, nap = {0, 20000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long polls = 0;; polls++) {
        int done = 0;
        int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            say_mpi_error(c, rc, what, step);
            return -1;
        }
        if (done)
            return 0;
        if (polls > 1000) /* the first millisecond or so spins, then the rank naps between polls */
            nanosleep(&nap, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
        double waited = (double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec);
        if (waited > c->timeout_s) {
            fprintf(stderr,
                    "grip-host: rank %d (host %s): no answer from the other ranks in step '%s' (%s) within %.0f s "
                    "(--mpi-timeout): a rank died, hangs or never started; ending the job\n",
                    c->rank, c->host, step, what, c->timeout_s);
            MPI_Abort(MPI_COMM_WORLD, 3);
            return -1;
        }
    }
}

/* Starts a collective (rc from its MPI_I* call) and waits for it. */
static int finish(shard_comm *c, int rc, MPI_Request *req, const char *what, const char *step)
{
    if (rc != MPI_SUCCESS) {
        say_mpi_error(c, rc, what, step);
        return -1;
    }
    return wait_bounded(c, req, what, step);
}

static void merge_hits_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int bytes = 0;
    MPI_Type_size(*type, &bytes);
    uint32_t k = (uint32_t)((size_t)bytes / sizeof(shard_hit));
    for (int i = 0; i < *len; i++)
        shard_merge((const shard_hit *)in + (size_t)i * k, (shard_hit *)inout + (size_t)i * k, k);
}

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    char *end = NULL;
    long x = v ? strtol(v, &end, 10) : -1;
    return v && *v && !*end && x >= 0 && x < INT_MAX ? (int)x : fallback;
}

int shard_mpi_open(shard_comm *c, char *err, size_t errlen)
{
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized && MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Init failed (is this run under mpirun?)");
        return -1;
    }
    mpi_state *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(err, errlen, "out of memory");
        MPI_Finalize();
        return -1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    MPI_Op_create(merge_hits_op, 1, &st->merge_hits);
    /* the rank's place on its host: Open MPI says it in its environment (no collective, so a rank that never
     * came cannot stall this); other MPIs by a shared-memory split */
    c->local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", -1);
    c->local_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", -1);
    if (c->local_rank < 0 || c->local_size < 1) {
        MPI_Comm node;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &c->local_rank);
        MPI_Comm_size(node, &c->local_size);
        MPI_Comm_free(&node);
    }
    c->mpi = st;
    return 0;
}

void shard_mpi_close(shard_comm *c)
{
    mpi_state *st = c->mpi;
    MPI_Op_free(&st->merge_hits);
    free(st);
    c->mpi = NULL;
    MPI_Finalize();
}

void shard_mpi_abort(shard_comm *c, int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
}

int shard_mpi_bcast(shard_comm *c, void *buf, size_t bytes, const char *step)
{
    for (size_t at = 0; at < bytes; at += PIECE_BYTES) {
        size_t n = bytes - at < PIECE_BYTES ? bytes - at : PIECE_BYTES;
        MPI_Request req;
        int rc = MPI_Ibcast((char *)buf + at, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
        if (finish(c, rc, &req, "MPI_Ibcast", step) != 0)
            return -1;
    }
    return 0;
}

int shard_mpi_reduce_hits(shard_comm *c, shard_hit *hits, size_t m, uint32_t k, int all, const char *step)
{
    mpi_state *st = c->mpi;
    MPI_Datatype list;
    if (MPI_Type_contiguous((int)(k * sizeof(shard_hit)), MPI_BYTE, &list) != MPI_SUCCESS ||
        MPI_Type_commit(&list) != MPI_SUCCESS) {
        fprintf(stderr, "grip-host: rank %d: cannot make the MPI type of %u hits (step '%s')\n", c->rank, k, step);
        return -1;
    }
    size_t per_piece = PIECE_BYTES / (k * sizeof(shard_hit));
    int out = 0;
    for (size_t at = 0; at < m && out == 0; at += per_piece) {
        size_t n = m - at < per_piece ? m - at : per_piece;
        shard_hit *p = hits + at * k;
        MPI_Request req;
        int rc = all ? MPI_Iallreduce(MPI_IN_PLACE, p, (int)n, list, st->merge_hits, MPI_COMM_WORLD, &req)
                     : MPI_Ireduce(c->rank == 0 ? MPI_IN_PLACE : p, c->rank == 0 ? p : NULL, (int)n, list,
                                   st->merge_hits, 0, MPI_COMM_WORLD, &req);
        out = finish(c, rc, &req, all ? "MPI_Iallreduce" : "MPI_Ireduce", step);
    }
    MPI_Type_free(&list);
    return out;
}

int shard_mpi_allreduce(shard_comm *c, void *v, size_t n, int f64, int max, const char *step)
{
    size_t elem = f64 ? sizeof(double) : sizeof(float), per_piece = PIECE_BYTES / elem;
    for (size_t at = 0; at < n; at += per_piece) {
        size_t cnt = n - at < per_piece ? n - at : per_piece;
        MPI_Request req;
        int rc = MPI_Iallreduce(MPI_IN_PLACE, (char *)v + at * elem, (int)cnt, f64 ? MPI_DOUBLE : MPI_FLOAT,
                                max ? MPI_MAX : MPI_MIN, MPI_COMM_WORLD, &req);
        if (finish(c, rc, &req, "MPI_Iallreduce", step) != 0)
            return -1;
    }
    return 0;
}

int shard_mpi_allgather(shard_comm *c, const void *mine, size_t bytes, void *all, const char *step)
{
    if (bytes > INT_MAX) {
        fprintf(stderr, "grip-host: rank %d: step '%s': %zu bytes a rank is more than one all-gather moves\n", c->rank,
                step, bytes);
        return -1;
    }
    MPI_Request req;
    int rc = MPI_Iallgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, MPI_COMM_WORLD, &req);
    return finish(c, rc, &req, "MPI_Iallgather", step);
}

int shard_mpi_gather_text(shard_comm *c, const char *line, char *all, size_t width, const char *step)
{
    char *mine = calloc(1, width);
    if (!mine)
        return -1;
    strncpy(mine, line, width - 1);
    MPI_Request req;
    int rc = MPI_Igather(mine, (int)width, MPI_CHAR, all, (int)width, MPI_CHAR, 0, MPI_COMM_WORLD, &req);
    rc = finish(c, rc, &req, "MPI_Igather", step);
    free(mine);
    return rc;
}

int shard_mpi_barrier(shard_comm *c, const char *step)
{
    MPI_Request req;
    int rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
    return finish(c, rc, &req, "MPI_Ibarrier", step);
}
