/* comm_impl.h -- the MPI side of comm.h, in comm_mpi.c (a grip-host built with MPI) or comm_none.c (without):
 * comm.c handles a solo communicator and calls these only for MPI's world. Internal to shard/. */
#ifndef GRIP_HOST_SHARD_COMM_IMPL_H
#define GRIP_HOST_SHARD_COMM_IMPL_H

#include "shard/comm.h"

int shard_mpi_open(shard_comm *c, char *err, size_t errlen);
void shard_mpi_close(shard_comm *c);
void shard_mpi_abort(shard_comm *c, int code);
int shard_mpi_bcast(shard_comm *c, void *buf, size_t bytes, const char *step);
int shard_mpi_reduce_hits(shard_comm *c, shard_hit *hits, size_t m, uint32_t k, int all, const char *step);
int shard_mpi_allreduce(shard_comm *c, void *v, size_t n, int f64, int max, const char *step);
int shard_mpi_allgather(shard_comm *c, const void *mine, size_t bytes, void *all, const char *step);
int shard_mpi_gather_text(shard_comm *c, const char *line, char *all, size_t width, const char *step);
int shard_mpi_barrier(shard_comm *c, const char *step);

#endif
