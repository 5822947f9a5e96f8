/* comm_none.c -- comm_impl.h in a grip-host built without MPI: MPI's world cannot be opened, so comm.c never
 * calls the rest (each says so if it were). */
#include "shard/comm_impl.h"

#include <stdio.h>

static int absent(const char *what)
{
    fprintf(stderr, "grip-host: %s: this grip-host was built without MPI\n", what);
    return -1;
}

int shard_mpi_open(shard_comm *c, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "this grip-host was built without MPI: configure with -DGRIP_WITH_MPI=ON where an MPI "
             "(e.g. Debian's libopenmpi-dev) is installed");
    return -1;
}

void shard_mpi_close(shard_comm *c) {}
void shard_mpi_abort(shard_comm *c, int code) {}
int shard_mpi_bcast(shard_comm *c, void *buf, size_t bytes, const char *step)
{
    return absent(step);
}
int shard_mpi_reduce_hits(shard_comm *c, shard_hit *hits, size_t m, uint32_t k, int all, const char *step)
{
    return absent(step);
}
int shard_mpi_allreduce(shard_comm *c, void *v, size_t n, int f64, int max, const char *step)
{
    return absent(step);
}
int shard_mpi_allgather(shard_comm *c, const void *mine, size_t bytes, void *all, const char *step)
{
    return absent(step);
}
int shard_mpi_gather_text(shard_comm *c, const char *line, char *all, size_t width, const char *step)
{
    return absent(step);
}
int shard_mpi_barrier(shard_comm *c, const char *step)
{
    return absent(step);
}
