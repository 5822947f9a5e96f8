/* comm.c -- comm.h: a solo communicator here, MPI's world through comm_impl.h. */
#define _POSIX_C_SOURCE 200809L
#include "shard/comm.h"
#include "shard/comm_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the width of one rank's line in shard_comm_agree */
#define AGREE_WIDTH 512

int shard_comm_open(int use_mpi, double timeout_s, shard_comm *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->size = c->local_size = 1;
    c->timeout_s = timeout_s;
    if (gethostname(c->host, sizeof c->host - 1) != 0)
        strcpy(c->host, "?");
    return use_mpi ? shard_mpi_open(c, err, errlen) : 0;
}

void shard_comm_close(shard_comm *c)
{
    if (c->mpi)
        shard_mpi_close(c);
}

void shard_comm_abort(shard_comm *c, int code)
{
    if (c->mpi)
        shard_mpi_abort(c, code);
    exit(code);
}

int shard_comm_bcast(shard_comm *c, void *buf, size_t bytes, const char *step)
{
    return c->mpi ? shard_mpi_bcast(c, buf, bytes, step) : 0;
}

int shard_comm_reduce_hits(shard_comm *c, shard_hit *hits, size_t m, uint32_t k, const char *step)
{
    return c->mpi ? shard_mpi_reduce_hits(c, hits, m, k, 0, step) : 0;
}

int shard_comm_allreduce_hits(shard_comm *c, shard_hit *hits, size_t m, uint32_t k, const char *step)
{
    return c->mpi ? shard_mpi_reduce_hits(c, hits, m, k, 1, step) : 0;
}

int shard_comm_allreduce_f32(shard_comm *c, float *v, size_t n, int max, const char *step)
{
    return c->mpi ? shard_mpi_allreduce(c, v, n, 0, max, step) : 0;
}

int shard_comm_allreduce_f64(shard_comm *c, double *v, size_t n, int max, const char *step)
{
    return c->mpi ? shard_mpi_allreduce(c, v, n, 1, max, step) : 0;
}

int shard_comm_allgather_bytes(shard_comm *c, const void *mine, size_t bytes, void *all, const char *step)
{
    if (c->mpi)
        return shard_mpi_allgather(c, mine, bytes, all, step);
    memmove(all, mine, bytes);
    return 0;
}

int shard_comm_allgather_u64(shard_comm *c, uint64_t word, uint64_t *all, const char *step)
{
    return shard_comm_allgather_bytes(c, &word, sizeof word, all, step);
}

int shard_comm_barrier(shard_comm *c, const char *step)
{
    return c->mpi ? shard_mpi_barrier(c, step) : 0;
}

int shard_comm_agree(shard_comm *c, const char *why)
{
    int failed = why && *why;
    if (!c->mpi) {
        if (failed)
            fprintf(stderr, "grip-host: %s\n", why);
        return failed;
    }
    uint64_t *flags = malloc((size_t)c->size * sizeof *flags);
    char *lines = NULL;
    int n_failed = -1;
    if (!flags || shard_comm_allgather_u64(c, (uint64_t)failed, flags, "agreement") != 0)
        goto done;
    n_failed = 0;
    for (int r = 0; r < c->size; r++)
        n_failed += flags[r] != 0;
    if (n_failed == 0)
        goto done;
    char line[AGREE_WIDTH];
    snprintf(line, sizeof line, "%s (host %s): %s", "", c->host, failed ? why : "");
    lines = c->rank == 0 ? malloc((size_t)c->size * AGREE_WIDTH) : NULL;
    if ((c->rank == 0 && !lines) || shard_mpi_gather_text(c, line, lines, AGREE_WIDTH, "agreement") != 0) {
        n_failed = -1;
        goto done;
    }
    for (int r = 0; c->rank == 0 && r < c->size; r++)
        if (flags[r])
            fprintf(stderr, "grip-host: rank %d%s\n", r, lines + (size_t)r * AGREE_WIDTH);
done:
    free(flags);
    free(lines);
    return n_failed;
}
