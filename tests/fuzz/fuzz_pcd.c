/* fuzz_pcd.c -- libFuzzer harness of grip-host's PCD reader: the input is a whole .pcd file, any DATA kind
 * (ascii, binary, binary_compressed; the corpus has each). */
#include "fuzz_common.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    host_cloud c;
    char err[512] = "";
    int rc = pcd_read_mem(data, size, "fuzz.pcd", &c, err, sizeof err);
    fuzz_check_read(rc, &c, err, "fuzz.pcd");
    host_cloud_free(&c);
    return 0;
}
