/* test_model_db.c -- grip-host's model database (model_db.h) and runs against kept models (pipeline.h):
 *  - a generated scene whose models are several views each (merged, as the demo does): describing the models into
 *    a set, writing it, reading it back and running the scene against it gives the run on the clouds, bit for bit;
 *  - pipeline_check_models refuses a set described with other settings or by another ABI, naming the key;
 *  - the reader keeps every array and shape of a hand-made set (absent optional arrays included) and refuses,
 *    with a message that starts with the file's name and a zeroed set, every truncation, every flipped byte, and
 *    a file whose checksum is right but whose contents are not (keypoint past the points, a count too large, no
 *    model, a shape that is neither 0 nor the points);
 *  - a set holding one model's features as described (model_set_hold) borrows them and releases them once. */
#include "test_support.h"
#include "host_util.h"
#include "model_db.h"
#include "pipeline.h"
#include "judge/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void open_synth_pipeline(grip_pipeline *p, grip_config *cfg, const char *extra)
{
    grip_diag diag = {0};
    for (int i = 0; task_synth_pipeline[i]; i++)
        ck_assert_int_eq(grip_config_set(cfg, task_synth_pipeline[i], &diag), 0);
    if (extra)
        ck_assert_int_eq(grip_config_set(cfg, extra, &diag), 0);
    int opened = pipeline_open(p, getenv("GRIP_PLUGIN"), cfg, &diag);
    grip_diag_print(&diag, stderr);
    ck_assert_int_eq(opened, 0);
    grip_diag_free(&diag);
}

static void assert_same_results(const pipeline_result *a, const pipeline_result *b)
{
    ck_assert_uint_eq(a->n_models, b->n_models);
    for (uint32_t m = 0; m < a->n_models; m++)
        ck_assert_uint_eq(a->model_keypoints[m], b->model_keypoints[m]);
    ck_assert_uint_eq(a->scene_keypoints, b->scene_keypoints);
    ck_assert_uint_eq(a->correspondences, b->correspondences);
    ck_assert_uint_eq(a->n_hypotheses, b->n_hypotheses);
    for (size_t i = 0; i < a->n_hypotheses; i++) {
        const pipeline_instance *x = &a->hypotheses[i], *y = &b->hypotheses[i];
        ck_assert_uint_eq(x->model, y->model);
        ck_assert_int_eq(x->accepted, y->accepted);
        ck_assert_uint_eq(x->correspondences, y->correspondences);
        ck_assert_mem_eq(x->pose, y->pose, sizeof x->pose);
        ck_assert_uint_eq(grip_test_float_bits(x->fitness), grip_test_float_bits(y->fitness));
        ck_assert_uint_eq(grip_test_float_bits(x->rmse), grip_test_float_bits(y->rmse));
    }
}

static void assert_same_arrays(const grip_array *a, const grip_array *b, size_t elem)
{
    ck_assert_uint_eq(a->rows, b->rows);
    ck_assert_uint_eq(a->cols, b->cols);
    ck_assert_uint_eq(a->dtype, b->dtype);
    if (a->rows)
        ck_assert_mem_eq(a->data, b->data, (size_t)(a->rows * a->cols) * elem);
}

static void assert_same_sets(const model_set *a, const model_set *b)
{
    ck_assert_uint_eq(a->n_models, b->n_models);
    ck_assert_uint_eq(a->dim, b->dim);
    ck_assert_uint_eq(a->rows, b->rows);
    ck_assert_str_eq(a->settings, b->settings);
    ck_assert_uint_eq(a->abi_major, b->abi_major);
    ck_assert_uint_eq(a->abi_minor, b->abi_minor);
    ck_assert_mem_eq(a->reference, b->reference, (size_t)(a->rows * a->dim) * sizeof(float));
    ck_assert_mem_eq(a->model_ids, b->model_ids, (size_t)a->rows * sizeof(uint32_t));
    for (uint32_t m = 0; m < a->n_models; m++) {
        const grip_cloud *ca = a->views[m].cloud, *cb = b->views[m].cloud;
        const grip_features *fa = a->views[m].features, *fb = b->views[m].features;
        ck_assert_str_eq(a->models[m].name, b->models[m].name);
        ck_assert_uint_eq(ca->width, cb->width);
        ck_assert_uint_eq(ca->height, cb->height);
        ck_assert_mem_eq(ca->viewpoint, cb->viewpoint, sizeof ca->viewpoint);
        assert_same_arrays(&ca->xyz, &cb->xyz, 4);
        assert_same_arrays(&ca->normals, &cb->normals, 4);
        assert_same_arrays(&ca->rgb, &cb->rgb, 1);
        ck_assert_uint_eq(fa->descriptor_dim, fb->descriptor_dim);
        assert_same_arrays(&fa->keypoints, &fb->keypoints, 4);
        assert_same_arrays(&fa->keypoint_xyz, &fb->keypoint_xyz, 4);
        assert_same_arrays(&fa->normals, &fb->normals, 4);
        assert_same_arrays(&fa->frames, &fb->frames, 4);
        assert_same_arrays(&fa->descriptors, &fb->descriptors, 4);
    }
}

/* A generated scene of 2 objects, each model 4 rendered views; the run on the clouds against the run on the
 * models read back from a database. */
START_TEST(database_run_equals_the_run_on_the_clouds)
{
    synth_params sp;
    synth_params_default(&sp);
    sp.n_objects = 2;
    sp.model_views = 4;
    sp.width = 320; /* a quarter of the pixels: the comparison needs instances, not detail */
    sp.height = 240;
    recognition_task t;
    char err[512];
    ck_assert_msg(task_from_synth(&sp, 0.01, 180, &t, err, sizeof err) == 0, "%s", err);
    grip_config cfg = {0};
    grip_diag diag = {0};
    grip_pipeline p;
    open_synth_pipeline(&p, &cfg, NULL);

    pipeline_result direct;
    int ran = pipeline_run(&p, t.clouds, t.n_clouds, t.model_of_cloud, t.n_models, t.scene, &direct, &diag);
    grip_diag_print(&diag, stderr);
    ck_assert_int_eq(ran, 0);
    ck_assert_msg(pipeline_result_accepted(&direct) >= 1, "the direct run found nothing: the comparison proves little");

    model_set described, loaded;
    ck_assert_int_eq(pipeline_describe_models(&p, t.clouds, t.n_clouds, t.model_of_cloud, t.n_models, t.model_names,
                                              &described, &diag),
                     0);
    const char *path = grip_test_tmp_path("models.grip");
    ck_assert_msg(model_db_write(path, &described, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(model_db_read(path, &loaded, err, sizeof err) == 0, "%s", err);
    assert_same_sets(&described, &loaded);
    ck_assert_int_eq(pipeline_check_models(&p, &loaded, path, &diag), 0);

    grip_index *index = NULL;
    pipeline_result from_db;
    ck_assert_int_eq(pipeline_build_index(&p, &loaded, &index, &diag), 0);
    ck_assert_int_eq(pipeline_run_scene(&p, &loaded, index, t.scene, &from_db, &diag), 0);
    assert_same_results(&direct, &from_db);
    pipeline_result_free(&from_db);
    /* kept models and index: a second scene run gives the same again */
    ck_assert_int_eq(pipeline_run_scene(&p, &loaded, index, t.scene, &from_db, &diag), 0);
    assert_same_results(&direct, &from_db);
    pipeline_result_free(&from_db);
    index->release(index);

    /* another ABI: refused, the file named */
    loaded.abi_minor += 1;
    ck_assert_int_eq(pipeline_check_models(&p, &loaded, "models.grip", &diag), -1);
    ck_assert_ptr_nonnull(strstr(diag.messages[diag.count - 1], "models.grip: described by a plugin of ABI"));
    loaded.abi_minor -= 1;
    pipeline_close(&p);
    grip_config_free(&cfg);

    /* another radius: refused, the key and both values named; a scene-only key: accepted */
    open_synth_pipeline(&p, &cfg, "descriptor.radius=0.03");
    ck_assert_int_eq(pipeline_check_models(&p, &loaded, "models.grip", &diag), -1);
    ck_assert_ptr_nonnull(strstr(diag.messages[diag.count - 1],
                                 "models.grip: its models were described with descriptor.radius = 0.035, but this "
                                 "run's config gives descriptor.radius = 0.03"));
    pipeline_close(&p);
    grip_config_free(&cfg);
    open_synth_pipeline(&p, &cfg, "descriptor.scene_leaf=0.02");
    ck_assert_int_eq(pipeline_check_models(&p, &loaded, "models.grip", &diag), 0);
    pipeline_close(&p);
    grip_config_free(&cfg);

    model_set_free(&described);
    model_set_free(&loaded);
    pipeline_result_free(&direct);
    grip_diag_free(&diag);
    task_free(&t);
}
END_TEST

/* A small set by hand: model 0 organized 2 x 3 with cloud normals and colours but no frames, model 1 of 4 points
 * with frames and normals; descriptors of 3 values. */
static void make_small_set(model_set *s)
{
    ck_assert_int_eq(model_set_alloc(s, 2, 3, 5), 0);
    s->settings = host_strdup("plugin = grip test\ndescriptor.radius = 0.02\n");
    s->abi_major = GRIP_ABI_MAJOR;
    s->abi_minor = GRIP_ABI_MINOR;
    stored_model_shape a = {6, 2, 3, 2, 6, 6, 6, 0}, b = {4, 3, 4, 1, 0, 0, 4, 3};
    ck_assert_int_eq(model_set_shape(s, 0, "first", &a, 0), 0);
    ck_assert_int_eq(model_set_shape(s, 1, "second", &b, 2), 0);
    float v = 0.5f;
    for (uint32_t m = 0; m < 2; m++) {
        stored_model *sm = &s->models[m];
        uint64_t np = sm->cloud.xyz.rows, nk = sm->features.keypoints.rows;
        for (uint64_t i = 0; i < np * 3; i++) {
            sm->xyz[i] = v += 0.25f;
            if (sm->cloud_normals)
                sm->cloud_normals[i] = -v;
            if (sm->rgb)
                sm->rgb[i] = (uint8_t)i;
        }
        for (uint64_t i = 0; sm->normals && i < np * 4; i++)
            sm->normals[i] = v * 2;
        for (uint64_t k = 0; k < nk; k++) {
            sm->keypoints[k] = (uint32_t)(np - 1 - k);
            for (int c = 0; c < 3; c++)
                sm->keypoint_xyz[3 * k + c] = sm->xyz[3 * sm->keypoints[k] + c];
            for (int c = 0; sm->frames && c < 9; c++)
                sm->frames[9 * k + c] = (float)c;
        }
        sm->cloud.viewpoint[2] = (float)m;
    }
    for (uint64_t i = 0; i < s->rows * s->dim; i++)
        s->reference[i] = (float)i / 7.0f;
}

static void *write_and_load(const model_set *s, size_t *size)
{
    char err[512];
    const char *path = grip_test_tmp_path("small.grip");
    ck_assert_msg(model_db_write(path, s, err, sizeof err) == 0, "%s", err);
    void *bytes = grip_test_read_file(path, size);
    ck_assert_ptr_nonnull(bytes);
    return bytes;
}

static int set_is_zeroed(const model_set *s)
{
    return !s->models && !s->views && !s->reference && !s->model_ids && !s->settings && s->n_models == 0;
}

static void expect_refused(const void *bytes, size_t size, const char *needle)
{
    model_set s;
    char err[512] = "";
    ck_assert_int_eq(model_db_read_mem(bytes, size, "x.grip", &s, err, sizeof err), -1);
    ck_assert_msg(set_is_zeroed(&s), "a refused file leaves a set behind");
    ck_assert_msg(strncmp(err, "x.grip: ", 8) == 0, "message does not start with the file's name: %s", err);
    ck_assert_msg(!needle || strstr(err, needle), "message lacks '%s': %s", needle, err);
}

/* Sets the 8 (or 4) bytes at offset to v, little-endian, and the checksum to the new contents'. */
static void patch(unsigned char *b, size_t size, size_t offset, uint64_t v, int bytes)
{
    for (int k = 0; k < bytes; k++)
        b[offset + (size_t)k] = (unsigned char)(v >> (8 * k));
    uint64_t h = model_db_checksum(b, size);
    for (int k = 0; k < 8; k++)
        b[MODEL_DB_CHECKSUM_OFFSET + (size_t)k] = (unsigned char)(h >> (8 * k));
}

START_TEST(small_set_round_trip)
{
    model_set s, back;
    make_small_set(&s);
    size_t size = 0;
    void *bytes = write_and_load(&s, &size);
    ck_assert_uint_eq(size % 8, 0);
    char err[512];
    ck_assert_msg(model_db_read_mem(bytes, size, "x.grip", &back, err, sizeof err) == 0, "%s", err);
    assert_same_sets(&s, &back);
    ck_assert_ptr_null(back.models[0].frames);
    ck_assert_ptr_null(back.models[1].rgb);
    ck_assert_uint_eq(back.model_ids[1], 0);
    ck_assert_uint_eq(back.model_ids[2], 1);
    model_set_free(&back);
    model_set_free(&s);
    free(bytes);
}
END_TEST

static int held_releases;

static void count_release(grip_features *f)
{
    (void)f;
    held_releases++;
}

/* A held set (model_set_hold) takes the features object as the descriptor stage returned it: its view is that
 * object, the cloud's arrays are borrowed, the index builds from the features' descriptors with no ids, and
 * model_set_free releases the object once. A copied set gives its own rows and ids. */
START_TEST(held_set_takes_the_features)
{
    float xyz[6] = {0, 0, 1, 0, 1, 1}, rows[2 * 3] = {1, 2, 3, 4, 5, 6};
    grip_cloud cloud;
    memset(&cloud, 0, sizeof cloud);
    cloud.struct_size = sizeof cloud;
    cloud.xyz = host_array(GRIP_F32, 2, 3, xyz);
    cloud.name = "caller's name";
    grip_features f;
    memset(&f, 0, sizeof f);
    f.struct_size = sizeof f;
    f.descriptor_dim = 3;
    f.descriptors = host_array(GRIP_F32, 2, 3, rows);
    f.release = count_release;
    held_releases = 0;
    model_set s;
    ck_assert_int_eq(model_set_hold(&s, &cloud, &f, "milk", "descriptor.impl = shot\n", 1, 3), 0);
    ck_assert_uint_eq(s.n_models, 1);
    ck_assert_uint_eq(s.dim, 3);
    ck_assert_uint_eq(s.rows, 2);
    ck_assert_ptr_eq(s.held, &f);
    ck_assert_ptr_eq(s.views[0].features, &f);
    ck_assert_ptr_eq(s.views[0].cloud, &s.models[0].cloud);
    ck_assert_ptr_eq(s.models[0].cloud.xyz.data, xyz); /* borrowed */
    ck_assert_str_eq(s.models[0].cloud.name, "milk");
    ck_assert_str_eq(s.settings, "descriptor.impl = shot\n");
    ck_assert_uint_eq(s.abi_major, 1);
    ck_assert_uint_eq(s.abi_minor, 3);
    grip_array ref, ids;
    memset(&ids, 0, sizeof ids);
    ck_assert_int_eq(model_set_reference(&s, &ref, &ids), 0);
    ck_assert_ptr_eq(ref.data, rows);
    ck_assert_uint_eq(ref.rows, 2);
    ck_assert_ptr_null(ids.data);
    ck_assert_int_eq(held_releases, 0);
    model_set_free(&s);
    ck_assert_int_eq(held_releases, 1);
    ck_assert_ptr_null(s.held);
    ck_assert_uint_eq(s.n_models, 0);

    model_set copied;
    make_small_set(&copied);
    ck_assert_int_eq(model_set_reference(&copied, &ref, &ids), 1);
    ck_assert_ptr_eq(ref.data, copied.reference);
    ck_assert_ptr_eq(ids.data, copied.model_ids);
    ck_assert_uint_eq(ids.rows, copied.rows);
    model_set_free(&copied);
    ck_assert_int_eq(held_releases, 1);
}
END_TEST

START_TEST(every_truncation_and_flipped_byte_is_refused)
{
    model_set s;
    make_small_set(&s);
    size_t size = 0;
    unsigned char *bytes = write_and_load(&s, &size);
    for (size_t keep = 0; keep < size; keep++)
        expect_refused(bytes, keep, keep == 0 ? NULL : "truncated");
    for (size_t at = 0; at < size; at++) {
        bytes[at] ^= 0x10;
        expect_refused(bytes, size, NULL);
        bytes[at] ^= 0x10;
    }
    model_set_free(&s);
    free(bytes);
}
END_TEST

START_TEST(consistent_checksum_wrong_contents_is_refused)
{
    model_set s;
    make_small_set(&s);
    size_t size = 0;
    unsigned char *good = write_and_load(&s, &size);
    unsigned char *b = malloc(size);
    size_t settings = (strlen(s.settings) + 7) & ~(size_t)7;
    size_t record0 = MODEL_DB_HEADER_BYTES + settings;
    size_t name0 = 8; /* "first" padded */
    size_t keypoints0 = record0 + 80 + name0 + 6 * 12 + 6 * 12 + 24; /* after xyz, cloud normals, rgb (18 -> 24) */
    struct {
        size_t offset;
        uint64_t value;
        int bytes;
        const char *needle;
    } cases[] = {
        {8, 2, 4, "format version 2"},
        {12, 72, 4, "header size"},
        {24, 0, 4, "0 models"},
        {28, 0, 4, "descriptors of 0 values"},
        {32, 6, 8, "the models have 5 keypoints, the header says 6"},
        {40, 1u << 20, 8, "truncated or corrupt"},
        {record0 + 4, 4, 4, "width x height"},
        {record0 + 32, 1ull << 40, 8, "width x height"},
        {record0 + 40, 1ull << 60, 8, "truncated or corrupt"},
        {record0 + 56, 2, 8, "model 0's colours has 2 rows, not 0 or 6"},
        {keypoints0, 6, 4, "model 0's keypoint 0 is point 6, past its points"},
        {48, size + 8, 8, "truncated"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(b, good, size);
        patch(b, size, cases[i].offset, cases[i].value, cases[i].bytes);
        expect_refused(b, size, cases[i].needle);
    }
    memcpy(b, good, size);
    memcpy(b, "GRIPMDX", 7);
    expect_refused(b, size, "not a grip model database");
    model_set_free(&s);
    free(good);
    free(b);
}
END_TEST

START_TEST(write_refuses_an_empty_set_and_leaves_no_file)
{
    model_set s = {0};
    char err[512];
    const char *path = grip_test_tmp_path("empty.grip");
    ck_assert_int_eq(model_db_write(path, &s, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "no model to write"));
    ck_assert_int_eq(host_file_readable(path), 0);
    make_small_set(&s);
    ck_assert_int_eq(model_db_write("/nonexistent-folder/x.grip", &s, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "cannot create"));
    model_set_free(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model_db");
    TCase *tc = tcase_create("model_db");
    tcase_set_timeout(tc, 600);
    tcase_add_checked_fixture(tc, grip_test_tmp_dir_make, grip_test_tmp_dir_remove);
    tcase_add_test(tc, small_set_round_trip);
    tcase_add_test(tc, held_set_takes_the_features);
    tcase_add_test(tc, every_truncation_and_flipped_byte_is_refused);
    tcase_add_test(tc, consistent_checksum_wrong_contents_is_refused);
    tcase_add_test(tc, write_refuses_an_empty_set_and_leaves_no_file);
    tcase_add_test(tc, database_run_equals_the_run_on_the_clouds);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
