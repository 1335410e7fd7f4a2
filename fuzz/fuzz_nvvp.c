/* fuzz/fuzz_nvvp.c: libFuzzer target for the NVVP session importer (see fuzz_import.h,
 * fuzz/run.sh): its XML reader, base64 and gzip decoding, and the nvprof importer behind it. */
#include "fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_import(data, size, "nvvp", ".nvvp");
}
