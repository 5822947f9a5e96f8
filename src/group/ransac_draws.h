/* ransac_draws.h -- the samples one RANSAC search draws, as PCL 1.13 draws them (SampleConsensusModel::getSamples
 * and drawIndexSample over boost::mt19937): three members a draw by a partial Fisher-Yates shuffle that persists
 * across draws, a draw kept when its three model keypoints are pairwise farther apart than the members' spread
 * (SampleConsensusModelRegistration::isSampleGood), and the stream's end when 1000 draws in a row fail that test.
 * The stream depends only on the seed and the members' model keypoints, never on the fits: a search takes it chunk
 * by chunk, one thread drawing while the others fit (group/cluster.c). test_gc compares it with a plain loop.
 *
 * Ownership: grip_ransac_draws_new allocates the stream, grip_ransac_draws_free frees it; the members' keypoints
 * are borrowed and must outlive it. Not thread-safe: one thread takes from a stream at a time. */
#ifndef GRIP_GROUP_RANSAC_DRAWS_H
#define GRIP_GROUP_RANSAC_DRAWS_H

#include <stddef.h>
#include <stdint.h>

#define GRIP_RANSAC_SAMPLE_SIZE 3

typedef struct grip_ransac_draws grip_ransac_draws;

/* The stream of a search over m members whose model keypoints are src (m x 3 floats), from seed; NULL without memory
 * or when m is below 3 or above UINT32_MAX. */
grip_ransac_draws *grip_ransac_draws_new(const float (*src)[3], size_t m, uint32_t seed);

/* Writes the next n good samples (member positions, in draw order) to sample and returns n, or fewer when the stream
 * ends first (and 0 from then on). */
size_t grip_ransac_draws_take(grip_ransac_draws *d, uint32_t (*sample)[GRIP_RANSAC_SAMPLE_SIZE], size_t n);

void grip_ransac_draws_free(grip_ransac_draws *d);

#endif
