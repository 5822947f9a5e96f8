/*
 * plugin.h -- the whole public ABI of a grip recognition plugin (ABI 1.4).
 *
 * A grip plugin is a shared object that exports exactly one symbol, grip_plugin_get(). A host dlopen()s it,
 * asks for the ABI it speaks, and receives a table of five kinds of pipeline stages:
 *
 *     descriptor -> index -> match -> group -> verify
 *
 * Each stage implementation publishes its parameter table, is created from key/value strings, and runs on the
 * CPU or on a CUDA device. Stages of different plugins may be mixed in one pipeline.
 *
 * Rules of the road (they hold for every declaration below):
 *
 *  - Growth. Every struct that crosses the ABI starts with `uint32_t struct_size`, the size the writer
 *    compiled with. Fields are only ever appended. A reader never reads past struct_size; a field it cannot see
 *    takes its documented default. Arrays of structs carry their element stride (`item_size`). A NULL function
 *    pointer means "not provided". An incompatible change bumps GRIP_ABI_MAJOR.
 *  - Ownership. Whoever allocates frees. Inputs stay owned by the caller and are only read during the call.
 *    An object a plugin returns (grip_stage, grip_features, grip_index, grip_matches, grip_hypotheses,
 *    grip_verdicts) is released only through the function pointer it carries, i.e. by the plugin that made it.
 *  - Threading. A grip_ctx and everything created from it are used by one thread at a time. Distinct contexts
 *    may be used from distinct threads at once. The table returned by grip_plugin_get() is immutable and may be
 *    read from any thread.
 *  - Synchrony. Every call returns when its outputs are complete where the caller asked for them. A call queues
 *    its GPU work on the calling thread's own default stream (CUDA's per-thread default stream): contexts used from
 *    distinct threads on one device run their kernels concurrently; contexts used from one thread take turns.
 *  - Errors. Every fallible call returns a grip_status; on failure the context's last-error text
 *    (ctx_last_error) names the stage and the key or input at fault. Outputs are untouched (left NULL) on
 *    failure and nothing leaks: every call with an `out` pointer sets *out to NULL first. A plugin never prints to
 *    stdout, never exits, aborts or resets a device.
 *  - Hostile input. An invalid argument fails with GRIP_EINVAL (GRIP_ECONFIG for a bad key or value), and the
 *    context stays usable: a NULL pointer where one is required, a struct_size below the struct as this ABI
 *    first published it (the whole struct, except where a field says what it defaults to when the host's struct
 *    ends before it), an array of the wrong dtype or shape or whose item_size is below one element, indices out of
 *    range, a cloud with no finite point. A call with no context to report in (ctx_create, or a NULL or destroyed
 *    stage or index) leaves its text for ctx_last_error(NULL). A context, stage or index used after its release,
 *    and any object of the plugin released twice, are refused as well, but only while the memory has not been
 *    handed out again: that detection is best effort, and such a call stays undefined behaviour.
 *  - Memory spaces. Every array says where its bytes live (host or a CUDA device). Stages accept either and
 *    write outputs where the caller asks, so that stages of one plugin chain on the GPU without a round trip.
 */
#ifndef GRIP_PLUGIN_H
#define GRIP_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GRIP_ABI_MAJOR 1
#define GRIP_ABI_MINOR 4

#if defined(_WIN32)
#define GRIP_EXPORT __declspec(dllexport)
#else
#define GRIP_EXPORT __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------------------------------------------------
 * Status codes. 0 is success; every failure is negative. plugin->status_str() names each one.
 * ------------------------------------------------------------------------------------------------------- */
typedef enum grip_status {
    GRIP_OK = 0,
    GRIP_EINVAL = -1,       /* an argument or an input array is invalid (NULL, wrong shape, NaN where none allowed) */
    GRIP_ENOMEM = -2,       /* host or device memory exhausted; the context stays usable */
    GRIP_ECONFIG = -3,      /* a parameter is unknown, malformed or out of range */
    GRIP_EUNSUPPORTED = -4, /* the request is valid but this plugin or build cannot do it */
    GRIP_ENODEV = -5,       /* a CUDA device was required and none is usable */
    GRIP_ECUDA = -6,        /* a CUDA call failed (the text gives CUDA's own message) */
    GRIP_ELAPACK = -7,      /* a LAPACK routine failed (grip's own stages call none: kept for other plugins) */
    GRIP_EIO = -8,          /* reading or writing a file failed */
    GRIP_EINTERNAL = -9     /* a bug in the plugin; please report it with the last-error text */
} grip_status;

/* ---------------------------------------------------------------------------------------------------------
 * Arrays: a dense, row-major matrix of one element type, tagged with the memory space it lives in.
 * ------------------------------------------------------------------------------------------------------- */
typedef enum grip_dtype {
    GRIP_DTYPE_NONE = 0,
    GRIP_F32 = 1,  /* float */
    GRIP_U32 = 2,  /* uint32_t */
    GRIP_I32 = 3,  /* int32_t */
    GRIP_U8 = 4    /* uint8_t */
} grip_dtype;

typedef enum grip_memory {
    GRIP_MEM_HOST = 0, /* ordinary host memory */
    GRIP_MEM_CUDA = 1  /* CUDA device memory of device `device` */
} grip_memory;

typedef struct grip_array {
    uint32_t struct_size;
    uint32_t dtype;  /* grip_dtype */
    uint32_t memory; /* grip_memory */
    int32_t device;  /* CUDA ordinal when memory == GRIP_MEM_CUDA; -1 for host memory */
    uint64_t rows;   /* rows == 0 means "absent" wherever an array is optional */
    uint64_t cols;
    void *data;      /* rows*cols elements, contiguous, row-major; owned as the enclosing struct says */
} grip_array;

/* ---------------------------------------------------------------------------------------------------------
 * Point clouds, as the host hands them in. Owned by the host; read only during a call.
 * ------------------------------------------------------------------------------------------------------- */
typedef struct grip_cloud {
    uint32_t struct_size;
    uint32_t width;     /* points per row; width*height == xyz.rows */
    uint32_t height;    /* 1 for an unorganized cloud, > 1 for an organized (range image) cloud */
    grip_array xyz;     /* F32 n x 3; a row with a NaN coordinate is a missing point (organized clouds keep it) */
    grip_array normals; /* optional F32 n x 3 (or n x 4 with curvature last); rows == 0: the stage computes them */
    grip_array rgb;     /* optional U8 n x 3; rows == 0: no colour */
    const char *name;   /* optional, e.g. the file it came from; used in error texts; may be NULL */
    float viewpoint[3]; /* where the sensor was, in the cloud's frame (PCL's sensor origin): computed normals are
                           flipped toward it; (0, 0, 0) when the host's struct ends before this field */
} grip_cloud;

/* Which side of the match a cloud is on: the descriptor stage may be parametrised per role
 * (e.g. a finer keypoint sampling on models than on the scene, as in PCL's tutorial). */
typedef enum grip_role { GRIP_ROLE_MODEL = 0, GRIP_ROLE_SCENE = 1 } grip_role;

/* ---------------------------------------------------------------------------------------------------------
 * Context: device choice, CPU threads, the device memory pool and the last-error text.
 * ------------------------------------------------------------------------------------------------------- */
typedef struct grip_ctx grip_ctx; /* opaque */

typedef struct grip_ctx_options {
    uint32_t struct_size;
    int32_t device_ordinal; /* CUDA device to use when a stage runs on CUDA; -1 = the first usable one; below -1:
                               GRIP_EINVAL */
    uint32_t threads;       /* CPU threads for the CPU twins; 0 = as many as the OpenMP runtime offers; at most
                               1024 (and at most the OpenMP runtime's thread limit): more fails with GRIP_EINVAL */
} grip_ctx_options;

/* What a context has done with its CUDA device since it was created (ABI 1.2; grip_plugin.ctx_stats). The host
 * allocates it and sets struct_size to the size it compiled with (at least this whole struct); ctx_stats writes
 * the fields it knows, never past struct_size, and sets struct_size to the bytes it wrote. The counts (bytes,
 * copies, nanoseconds, pool_grows) only grow: a host measures a run by the difference of two readings. A context
 * that never used a device, and any context of a CPU-only build, reads device -1 and 0 everywhere else. */
typedef struct grip_ctx_stats {
    uint32_t struct_size;
    int32_t device;                    /* the CUDA ordinal the context uses; -1 before its first device use */
    uint64_t h2d_bytes;                /* bytes copied from host to device memory */
    uint64_t d2h_bytes;                /* bytes copied from device to host memory */
    uint64_t h2d_copies;               /* copies from host to device */
    uint64_t d2h_copies;               /* copies from device to host */
    uint64_t h2d_ns;                   /* host time inside those copies, in nanoseconds: each copy first waits for the
                                          device work queued before it, and that wait is not counted */
    uint64_t d2h_ns;                   /* the same for the copies to the host */
    uint64_t pool_reserved_bytes;      /* device memory the context's pool holds now (in use or cached for reuse) */
    uint64_t pool_reserved_high_bytes; /* the most it ever held */
    uint64_t pool_used_bytes;          /* of what it holds, the bytes allocated now */
    uint64_t pool_used_high_bytes;     /* the most ever allocated at once */
    uint64_t pool_grows;               /* allocations that made the pool take more memory from the driver: a run
                                          that allocates nothing new leaves it unchanged */
} grip_ctx_stats;

/* ---------------------------------------------------------------------------------------------------------
 * Parameters: each stage implementation publishes a table of these; configuration is key/value strings.
 * ------------------------------------------------------------------------------------------------------- */
typedef enum grip_param_type {
    GRIP_PARAM_BOOL = 1,   /* "true"/"false" (also 1/0, yes/no, on/off) */
    GRIP_PARAM_INT = 2,    /* decimal integer within [min, max] */
    GRIP_PARAM_FLOAT = 3,  /* finite decimal number within [min, max] */
    GRIP_PARAM_ENUM = 4,   /* one of the '|'-separated words in `choices` */
    GRIP_PARAM_STRING = 5  /* free text (e.g. a path) */
} grip_param_type;

typedef struct grip_param_info {
    uint32_t struct_size;
    uint32_t type;              /* grip_param_type */
    const char *key;            /* e.g. "radius" */
    const char *default_value;  /* as it would be written in a config file */
    double min, max;            /* inclusive range for INT and FLOAT */
    const char *choices;        /* ENUM: "auto|cuda|cpu"; otherwise NULL */
    const char *doc;            /* one line, with the unit */
    /* since ABI 1.1; a host reads it only when struct_size covers it (older tables: 0) */
    uint32_t flags;             /* GRIP_PARAM_FLAG_* */
} grip_param_info;

/* The parameter is a length in the cloud's unit (type FLOAT). A host may let the user write it as a multiple of
 * the cloud's measured resolution ("20 mr", grip_plugin.cloud_resolution) and passes the stage the product as a
 * plain number: a stage itself only ever gets numbers. */
#define GRIP_PARAM_FLAG_LENGTH 1u

typedef struct grip_kv {
    const char *key;
    const char *value;
} grip_kv;

/* ---------------------------------------------------------------------------------------------------------
 * Stage results. Each is allocated by the plugin whose stage produced it and released only through its own
 * `release` pointer, which also frees every array it holds. Arrays sit in the memory space the caller asked
 * for when it called the stage (grip_memory out_memory).
 * ------------------------------------------------------------------------------------------------------- */

/* descriptor stage output for one cloud */
typedef struct grip_features {
    uint32_t struct_size;
    uint32_t descriptor_dim; /* D, e.g. 352 for SHOT */
    grip_array keypoints;    /* U32 k x 1: index of each keypoint in the input cloud */
    grip_array keypoint_xyz; /* F32 k x 3 */
    grip_array normals;      /* F32 n x 4 (nx, ny, nz, curvature) for every cloud point; NaN rows where undefined */
    grip_array frames;       /* F32 k x 9: the descriptor's local reference frame, rows x, y, z axis; NaN if invalid */
    grip_array descriptors;  /* F32 k x D; a NaN row marks an invalid keypoint (as PCL does) */
    void (*release)(struct grip_features *self);
    /* since ABI 1.2 (read it only when struct_size covers it) */
    uint32_t normals_source; /* grip_normals_source: where `normals` came from */
    /* since ABI 1.3 (read it only when struct_size covers it). F32 n x 3: the described cloud's points, as the
     * stage read them, on the device, when the stage was called with out_memory GRIP_MEM_CUDA and ran there (rows
     * 0 otherwise: host output never carries a copy). The group and verify stages of the same plugin and context
     * read the scene's points from here instead of uploading the cloud again; a host need not look at it. */
    grip_array xyz;
} grip_features;

/* Where a descriptor stage took a cloud's normals from (grip_features.normals_source, ABI 1.2), as its `normals`
 * key (auto | compute | file) decided. */
typedef enum grip_normals_source {
    GRIP_NORMALS_UNSAID = 0,         /* the plugin does not say (an older plugin, or a stage that keeps no normals) */
    GRIP_NORMALS_COMPUTED = 1,       /* computed: the cloud carried none, or the stage was asked to compute them */
    GRIP_NORMALS_CLOUD = 2,          /* the cloud's own, every usable one already of unit length */
    GRIP_NORMALS_CLOUD_RESCALED = 3, /* the cloud's own, some rescaled to unit length */
    GRIP_NORMALS_RECOMPUTED = 4      /* `auto`: the cloud's own were unusable (more than a tenth of its finite points
                                        had a normal that is not finite or of length 0), computed instead */
} grip_normals_source;

/* index stage output: a searchable reference set, resident where the index stage's backend lives.
 * The search entry points are carried by the object, so a match stage of any plugin can query it. */
typedef struct grip_index grip_index;
struct grip_index {
    uint32_t struct_size;
    uint64_t rows;          /* reference rows, NaN rows included (they are never returned) */
    uint32_t dim;           /* D */
    uint32_t n_models;      /* 1 + the largest model id */
    grip_array model_ids;   /* U32 rows x 1, host memory: the model each reference row belongs to; the rows of
                               one model are contiguous and model ids ascend (build() refuses anything else) */
    /* k nearest reference rows of each query row, exact unless the index says otherwise.
     * `ids` (U32 m x k) and `sqdist` (F32 m x k) are allocated by the CALLER, in host or device memory.
     * Each row is sorted by squared distance, ties to the lower reference row. Rows with fewer than k
     * neighbours within max_sqdist (or a NaN query) are padded with id UINT32_MAX and +inf. */
    grip_status (*search)(grip_index *self, const grip_array *queries, uint32_t k, float max_sqdist,
                          grip_array *ids, grip_array *sqdist);
    uint32_t exact;         /* 1 when search returns the exact k nearest neighbours */
    grip_array reference;   /* the reference rows as the index keeps them (host or device memory), for match
                               policies that look from the reference side (mutual filter); rows == 0 when the
                               index keeps no plain copy */
    void (*release)(grip_index *self);
};

/* match stage output: correspondences, sorted by query, then best first (ties to the lower reference row) */
typedef struct grip_matches {
    uint32_t struct_size;
    uint64_t count;
    grip_array query;     /* U32 count x 1: query row (scene keypoint) */
    grip_array reference; /* U32 count x 1: the matched row counted within its model (the model keypoint number) */
    grip_array model_id;  /* U32 count x 1 */
    grip_array sqdist;    /* F32 count x 1: squared descriptor distance */
    void (*release)(struct grip_matches *self);
} grip_matches;

/* one pose hypothesis from the group stage */
typedef struct grip_hypothesis {
    uint32_t struct_size;
    uint32_t model_id;
    float pose[16];           /* row-major 4x4, maps model coordinates into the scene */
    float votes;              /* grouping score (Hough votes, or consensus-set size) */
    uint32_t n_members;
    const uint32_t *members;  /* n_members indices into the grip_matches given to group() */
} grip_hypothesis;

typedef struct grip_hypotheses {
    uint32_t struct_size;
    uint32_t count;
    uint32_t item_size;       /* stride of items, in bytes */
    grip_hypothesis *items;   /* host memory */
    void (*release)(struct grip_hypotheses *self);
} grip_hypotheses;

/* Why the verify stage rejected a hypothesis (grip_verdict.reason, ABI 1.1): the first test it failed, in the
 * order below. Each names the stage key that sets the test. A host whose grip_verdict ends before `reason`, or a
 * verdict whose struct_size does not cover it, reads GRIP_VERDICT_UNSPECIFIED for a rejected hypothesis, and so
 * does a host for a reason past the last it knows (the list may grow within a minor version). */
typedef enum grip_verdict_reason {
    GRIP_VERDICT_ACCEPTED = 0,    /* not rejected */
    GRIP_VERDICT_UNSPECIFIED = 1, /* rejected; the plugin says no more */
    GRIP_VERDICT_CAP = 2,         /* not verified: fewer votes than the max_hypotheses best */
    GRIP_VERDICT_ICP_FAILED = 3,  /* ICP's update was not finite (a degenerate pairing): the refined pose means
                                     nothing; max_correspondence_distance sets which pairs it uses. (A pose with no
                                     pair at all keeps its place and fails on fitness.) */
    GRIP_VERDICT_FITNESS = 4,     /* fitness below min_fitness */
    GRIP_VERDICT_RMSE = 5,        /* rmse above max_rmse */
    GRIP_VERDICT_DRIFT = 6,       /* ICP moved the model farther than max_drift from the grouped pose */
    GRIP_VERDICT_FREE_SPACE = 7,  /* violation above max_violation */
    GRIP_VERDICT_SUPPORT = 10,    /* more than max_sunk of the model lies beneath the scene's support plane (its
                                     dominant plane: the table) by more than support_margin */
    GRIP_VERDICT_DUPLICATE = 8,   /* within duplicate_distance (or its centre within duplicate_center_distance) of a
                                     better accepted pose of the same model, or filling the same space as a better
                                     accepted pose of any model (max_overlap) */
    GRIP_VERDICT_GHV = 9          /* not in the subset that global hypotheses verification found to explain the
                                     scene best */
} grip_verdict_reason;

/* the verify stage's verdict on one hypothesis */
typedef struct grip_verdict {
    uint32_t struct_size;
    uint32_t hypothesis;      /* index into the grip_hypotheses given to verify() */
    float pose[16];           /* refined pose, row-major, model -> scene */
    float fitness;            /* fraction of model points with a scene point within the inlier distance */
    float rmse;               /* root mean square distance of those inliers, in cloud units */
    uint32_t iterations;      /* refinement iterations run */
    uint32_t accepted;        /* 1 if the hypothesis is accepted */
    float violation;          /* of the model points an organized scene's camera should see in place, the fraction
                                 it sees through (a farther surface where the model would be); NaN when the scene
                                 is not organized */
    uint32_t reason;          /* grip_verdict_reason (ABI 1.1): GRIP_VERDICT_ACCEPTED when accepted, else why not */
} grip_verdict;

typedef struct grip_verdicts {
    uint32_t struct_size;
    uint32_t count;           /* one per hypothesis */
    uint32_t item_size;
    grip_verdict *items;      /* host memory */
    void (*release)(struct grip_verdicts *self);
} grip_verdicts;

/* A cloud together with what the descriptor stage found on it; used by group and verify. Owned by the host. */
typedef struct grip_view {
    uint32_t struct_size;
    const grip_cloud *cloud;
    const grip_features *features;
} grip_view;

/* ---------------------------------------------------------------------------------------------------------
 * Stages.
 * ------------------------------------------------------------------------------------------------------- */
typedef enum grip_stage_kind {
    GRIP_STAGE_DESCRIPTOR = 0,
    GRIP_STAGE_INDEX = 1,
    GRIP_STAGE_MATCH = 2,
    GRIP_STAGE_GROUP = 3,
    GRIP_STAGE_VERIFY = 4
} grip_stage_kind;
#define GRIP_STAGE_KIND_COUNT 5

/* backends a stage implementation offers (bit mask) */
#define GRIP_BACKEND_CPU 1u
#define GRIP_BACKEND_CUDA 2u

typedef struct grip_stage grip_stage; /* opaque: a configured stage instance */

typedef struct grip_stage_impl {
    uint32_t struct_size;
    uint32_t kind;      /* grip_stage_kind */
    const char *name;   /* the config's `impl` value, e.g. "shot" */
    const char *summary;
    uint32_t backends;  /* GRIP_BACKEND_* offered by this build */
    uint32_t n_params;
    const grip_param_info *params; /* n_params entries, stride params[0].struct_size */

    /* Creates a configured instance. Keys not in the table, malformed values and values out of range fail
     * with GRIP_ECONFIG and a last-error text naming every bad key. The instance borrows ctx, which must
     * outlive it; it is freed by destroy(). Unset keys take their defaults. */
    grip_status (*create)(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);
    void (*destroy)(grip_stage *stage);

    /* Exactly one of the five run functions below is set, the one of `kind` (a descriptor stage may also set
     * describe_many, at the end). Each writes a new object to *out, owned by the caller and released through that
     * object's release pointer. */

    /* descriptor: normals (unless the cloud carries them), keypoints (the given indices, or the stage's own
     * selection when keypoints is NULL), local frames and descriptors. */
    grip_status (*describe)(grip_stage *stage, const grip_cloud *cloud, uint32_t role /* grip_role */,
                            const grip_array *keypoints, uint32_t out_memory, grip_features **out);
    /* index: builds a searchable index over n x D reference rows; model_ids (U32 n x 1) may be NULL (all 0). */
    grip_status (*build)(grip_stage *stage, const grip_array *reference, const grip_array *model_ids,
                         grip_index **out);
    /* match: correspondences of the query rows against the index (which may come from another plugin). */
    grip_status (*match)(grip_stage *stage, grip_index *index, const grip_array *queries, uint32_t out_memory,
                         grip_matches **out);
    /* group: pose hypotheses from correspondences; models[i] is the view of model id i. */
    grip_status (*group)(grip_stage *stage, const grip_view *models, uint32_t n_models, const grip_view *scene,
                         const grip_matches *matches, grip_hypotheses **out);
    /* verify: refines and accepts or rejects each hypothesis against the scene. */
    grip_status (*verify)(grip_stage *stage, const grip_view *models, uint32_t n_models, const grip_view *scene,
                          const grip_hypotheses *hypotheses, grip_verdicts **out);

    /* since ABI 1.4 (read it only when struct_size covers it; NULL in the other kinds, and in a descriptor stage
     * that does not provide it: call describe() once a cloud instead).
     * descriptor: describes n_clouds clouds in one call, each as describe() would (the same features, bit for bit):
     * clouds[i] in role roles[i] with keypoints[i] (keypoints NULL, or an entry NULL: the stage's own selection).
     * out (n_clouds pointers, allocated by the caller) receives a new grip_features per cloud, all in out_memory,
     * each released through its own release pointer. A stage on a CUDA device describes several clouds at once,
     * each on a thread and stream of its own (how many: the stage says, e.g. grip's `clouds_in_flight` key); on the
     * CPU they run one after another. *failed (failed may be NULL) is n_clouds after success and after a failure of
     * the call itself (a NULL argument), else the lowest-numbered cloud that failed; on failure every out[i] is
     * NULL, and the last-error text names that cloud ("descriptor: clouds[3]: ..."). */
    grip_status (*describe_many)(grip_stage *stage, const grip_cloud *const *clouds, const uint32_t *roles,
                                 const grip_array *const *keypoints, uint32_t n_clouds, uint32_t out_memory,
                                 grip_features **out, uint32_t *failed);
} grip_stage_impl;

/* ---------------------------------------------------------------------------------------------------------
 * The plugin table.
 * ------------------------------------------------------------------------------------------------------- */
#define GRIP_CAP_CUDA 1u /* built with CUDA kernels (whether a device is present is asked with device_count) */

typedef struct grip_plugin {
    uint32_t struct_size;
    uint32_t abi_major;     /* the ABI this table follows (== the host's major) */
    uint32_t abi_minor;     /* the plugin's minor; may exceed the host's */
    const char *name;       /* "grip" */
    const char *version;    /* the plugin's own version, e.g. "0.1.0" */
    uint32_t capabilities;  /* GRIP_CAP_* */

    const char *(*status_str)(grip_status status); /* static text; never NULL */

    /* Contexts. opts may be NULL (defaults); its struct_size must cover the whole grip_ctx_options. Creating a
     * context touches no CUDA: a device is probed lazily by the first stage that needs one. destroy(NULL) is a
     * no-op. */
    grip_status (*ctx_create)(const grip_ctx_options *opts, grip_ctx **out);
    void (*ctx_destroy)(grip_ctx *ctx);
    /* Last error text of ctx, "" if none. Owned by ctx, valid until its next call. With a NULL ctx: the calling
     * thread's text of its last failed call that had no context to report in (ctx_create, a call given a NULL or
     * destroyed stage or index), valid until that thread's next such failure or ctx_create. */
    const char *(*ctx_last_error)(const grip_ctx *ctx);
    /* Number of usable CUDA devices (probes the driver; 0 on a CPU-only build or without a driver). */
    int32_t (*device_count)(grip_ctx *ctx);

    uint32_t n_stages;
    const grip_stage_impl *const *stages; /* n_stages pointers, static */

    /* since ABI 1.1 (read it only when struct_size covers it). The cloud's resolution: the mean distance from
     * each finite point to its nearest other point, in the cloud's unit, measured on the CPU. A cloud with fewer
     * than two distinct finite points fails with GRIP_EINVAL. */
    grip_status (*cloud_resolution)(grip_ctx *ctx, const grip_cloud *cloud, double *out);

    /* since ABI 1.2 (read it only when struct_size covers it). Writes the context's counters into *out, which the
     * caller allocates (grip_ctx_stats says how much is written). GRIP_EINVAL when ctx is not a live context, out
     * is NULL, or out->struct_size is below the whole grip_ctx_stats of ABI 1.2; GRIP_ECUDA when the device cannot
     * report its pool. Cheap: a host may call it around every stage. */
    grip_status (*ctx_stats)(grip_ctx *ctx, grip_ctx_stats *out);
} grip_plugin;

/* The one exported symbol. Returns the plugin table for the host's ABI major, or NULL when the plugin does not
 * speak it. The table is static: never freed, valid until the library is unloaded. Touches no CUDA. */
typedef const grip_plugin *(*grip_plugin_get_fn)(uint32_t host_abi_major, uint32_t host_abi_minor);
GRIP_EXPORT const grip_plugin *grip_plugin_get(uint32_t host_abi_major, uint32_t host_abi_minor);

#define GRIP_PLUGIN_ENTRY "grip_plugin_get"

#ifdef __cplusplus
}
#endif
#endif /* GRIP_PLUGIN_H */
