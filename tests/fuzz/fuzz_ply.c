/* fuzz_ply.c -- libFuzzer harness of grip-host's PLY reader: the input is a whole .ply file, ascii,
 * binary_little_endian or binary_big_endian (the corpus has each). */
#include "fuzz_common.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    host_cloud c;
    char err[512] = "";
    int rc = ply_read_mem(data, size, "fuzz.ply", &c, err, sizeof err);
    fuzz_check_read(rc, &c, err, "fuzz.ply");
    host_cloud_free(&c);
    return 0;
}
