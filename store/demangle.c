/* demangle.c: Itanium C++ names made readable, through the C++ runtime's __cxa_demangle
 * (libstdc++), which has a C-compatible signature. */
#include <stdlib.h>
#include <string.h>

#include "store.h"

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *store_demangle(const char *name)
{
    if (!name || strncmp(name, "_Z", 2) != 0)
        return NULL;
    int status = 0;
    char *out = __cxa_demangle(name, NULL, NULL, &status);
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}
