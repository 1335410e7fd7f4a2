/* fuzz/fuzz_chrome.c: libFuzzer target for the chrome importer (see fuzz_import.h, fuzz/run.sh). */
#include "fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_import(data, size, "chrome", "");
}
