/* comm.h -- what a sharded grip-host run needs from its ranks: the ranks' number and place, a broadcast from rank
 * 0, the top-k reduction of shard.h's hits at rank 0, a minimum all-reduce, an all-gather of one word a rank, and
 * an agreement on failure so that a rank that fails makes every rank stop, with rank 0 saying why.
 *
 * A communicator is either solo (one process, no MPI: every collective is the identity) or MPI's world
 * (comm_mpi.c; comm_none.c in a grip-host built without MPI, which refuses to open one). Every MPI call waits at
 * most the communicator's timeout: a rank that died, never started or hangs makes the others print which step
 * they waited in and abort the job (MPI_Abort), never hang. MPI's own errors are returned, not fatal
 * (MPI_ERRORS_RETURN), and printed with MPI's text; after one the caller aborts the job (shard_comm_abort). */
#ifndef GRIP_HOST_SHARD_COMM_H
#define GRIP_HOST_SHARD_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "shard/shard.h"

typedef struct shard_comm {
    int rank, size;             /* in the world */
    int local_rank, local_size; /* among the ranks of this host (MPI_COMM_TYPE_SHARED) */
    char host[64];              /* this host's name */
    double timeout_s;           /* the longest wait of any collective */
    void *mpi;                  /* the MPI state; NULL when solo */
} shard_comm;

/* Opens MPI's world (use_mpi; MPI_Init here) or a solo communicator. 0, or -1 with the reason in err (nothing
 * open). Close with shard_comm_close (MPI_Finalize). */
int shard_comm_open(int use_mpi, double timeout_s, shard_comm *c, char *err, size_t errlen);
void shard_comm_close(shard_comm *c);
/* Ends every rank of the job with exit status `code` (MPI_Abort); a solo communicator exits. */
void shard_comm_abort(shard_comm *c, int code);

/* Each returns 0, or -1 after printing (on this rank's stderr) which step failed and MPI's reason. `step` names
 * the step in that text. */
int shard_comm_bcast(shard_comm *c, void *buf, size_t bytes, const char *step);
/* rank 0 ends with the k best of every rank's hits, query by query (m x k hits, sorted by shard_hit_before);
 * other ranks' buffers are left undefined. */
int shard_comm_reduce_hits(shard_comm *c, shard_hit *hits, size_t m, uint32_t k, const char *step);
/* As shard_comm_reduce_hits, but every rank ends with the merged hits. */
int shard_comm_allreduce_hits(shard_comm *c, shard_hit *hits, size_t m, uint32_t k, const char *step);
/* v[i] = min over ranks of v[i], on every rank (max: the maximum). */
int shard_comm_allreduce_f32(shard_comm *c, float *v, size_t n, int max, const char *step);
int shard_comm_allreduce_f64(shard_comm *c, double *v, size_t n, int max, const char *step);
/* all[r] = rank r's word, on every rank (all: size words). */
int shard_comm_allgather_u64(shard_comm *c, uint64_t word, uint64_t *all, const char *step);
/* all[r * bytes .. ] = rank r's `bytes` bytes of mine, on every rank (all: size x bytes). */
int shard_comm_allgather_bytes(shard_comm *c, const void *mine, size_t bytes, void *all, const char *step);
/* Waits for every rank (the time spent waiting measures imbalance). */
int shard_comm_barrier(shard_comm *c, const char *step);

/* Every rank says whether it failed (why: one line, "" when it did not); rank 0 prints each failed rank's line
 * on stderr as "grip-host: rank R (host H): why". Returns the number of failed ranks (every rank gets it), or -1
 * when the agreement itself failed. */
int shard_comm_agree(shard_comm *c, const char *why);

#endif
