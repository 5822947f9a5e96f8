/* fuzz_model_db.c -- libFuzzer harness of grip-host's model database reader (model_db.h): the input is a whole
 * file, read once as it is and once with its checksum made right, so that mutations reach the layout checks behind
 * the checksum. Besides "no crash" it checks the reader's contract: a failure returns -1, leaves the set zeroed and
 * says one printable line starting with the file's name; a success holds arrays as long as their shapes say,
 * keypoints within their model's points and model ids ascending over the reference rows. */
#include "fuzz_common.h"
#include "model_db.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_success(const model_set *s)
{
    fuzz_require(s->n_models > 0 && s->dim > 0 && s->settings, "a set has models, a dimension and settings", "");
    uint64_t rows = 0;
    for (uint32_t m = 0; m < s->n_models; m++) {
        const grip_cloud *c = s->views[m].cloud;
        const grip_features *f = s->views[m].features;
        uint64_t np = c->xyz.rows, nk = f->keypoints.rows;
        fuzz_require((uint64_t)c->width * c->height == np, "points = width x height", "");
        fuzz_require(f->descriptor_dim == s->dim && f->descriptors.rows == nk, "descriptors of every keypoint", "");
        fuzz_touch(c->xyz.data, np * 12);
        fuzz_touch(c->normals.data, c->normals.rows * 12);
        fuzz_touch(c->rgb.data, c->rgb.rows * 3);
        fuzz_touch(f->keypoint_xyz.data, f->keypoint_xyz.rows * 12);
        fuzz_touch(f->normals.data, f->normals.rows * 16);
        fuzz_touch(f->frames.data, f->frames.rows * 36);
        fuzz_touch(f->descriptors.data, nk * s->dim * 4);
        const uint32_t *kp = f->keypoints.data;
        for (uint64_t k = 0; k < nk; k++)
            fuzz_require(kp[k] < np, "keypoints within their model's points", "");
        for (uint64_t r = rows; r < rows + nk; r++)
            fuzz_require(s->model_ids[r] == m, "model ids ascend over the reference rows", "");
        rows += nk;
    }
    fuzz_require(rows == s->rows, "the models' keypoints are the reference rows", "");
}

static void read_once(const uint8_t *data, size_t size)
{
    model_set s;
    char err[512] = "";
    int rc = model_db_read_mem(data, size, "fuzz.grip", &s, err, sizeof err);
    if (rc == 0) {
        check_success(&s);
        model_set_free(&s);
        return;
    }
    fuzz_require(rc == -1, "a failure returns -1", err);
    fuzz_require(!s.models && !s.views && !s.reference && !s.model_ids && !s.settings && s.n_models == 0,
                 "a failure leaves the set zeroed", err);
    fuzz_require(strncmp(err, "fuzz.grip: ", 11) == 0 && strlen(err) > 12, "the message starts with the file name",
                 err);
    for (const char *p = err; *p; p++)
        fuzz_require((unsigned char)*p >= 0x20 && *p != 0x7f, "the message is one printable line", err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_once(data, size);
    if (size < MODEL_DB_HEADER_BYTES)
        return 0;
    uint8_t *fixed = malloc(size);
    if (!fixed)
        return 0;
    memcpy(fixed, data, size);
    uint64_t h = model_db_checksum(fixed, size);
    for (int k = 0; k < 8; k++)
        fixed[MODEL_DB_CHECKSUM_OFFSET + k] = (uint8_t)(h >> (8 * k));
    read_once(fixed, size);
    free(fixed);
    return 0;
}
