/* normals_choice.c -- see normals_choice.h. */
#include "stages/normals_choice.h"
#include "descriptor/normals_given.h"

/* auto gives up on the cloud's normals when more than this fraction of its finite points have no usable one: a few
 * missing normals (PCL writes NaN where a point had too few neighbours) stay undefined, as computed ones would;
 * many mean the file's normals are not normals of this cloud. */
#define AUTO_MAX_UNUSABLE_FRACTION 0.1

static const char *cloud_name(const grip_cloud_input *in)
{
    return in->name && *in->name ? in->name : "(unnamed)";
}

grip_status grip_normals_choose(grip_stage *st, const grip_cloud_input *in, const char *key_name, float *out,
                                uint32_t *source)
{
    const int choice = grip_stage_choice(st, "normals");
    *source = GRIP_NORMALS_COMPUTED;
    if (choice == GRIP_NORMALS_CHOICE_COMPUTE)
        return GRIP_OK;
    if (!in->normals) {
        if (choice == GRIP_NORMALS_CHOICE_FILE)
            return grip_fail(st->ctx, GRIP_ECONFIG,
                             "%s = file: cloud %s carries no normals (set %s = auto or compute to compute them)",
                             key_name, cloud_name(in), key_name);
        return GRIP_OK;
    }
    grip_normals_given_report r;
    grip_normals_given_unit(in->xyz, in->normals, in->normal_stride, in->n, out, &r);
    if (choice == GRIP_NORMALS_CHOICE_FILE && r.unusable == r.finite_points)
        return grip_fail(st->ctx, GRIP_ECONFIG,
                         "%s = file: none of the %zu normals cloud %s carries at its finite points is usable (each "
                         "is not finite or of length 0)",
                         key_name, r.finite_points, cloud_name(in));
    if (choice == GRIP_NORMALS_CHOICE_AUTO && (double)r.unusable > AUTO_MAX_UNUSABLE_FRACTION * r.finite_points) {
        *source = GRIP_NORMALS_RECOMPUTED;
        return GRIP_OK;
    }
    *source = r.rescaled ? GRIP_NORMALS_CLOUD_RESCALED : GRIP_NORMALS_CLOUD;
    return GRIP_OK;
}
