/* Issue 22's compressor workload: zstd (zstd-sys's bundled library) at level 19.
 * usage: zstd-driver SCALE — generates SCALE * 256 KiB of word-salad text, compresses it at
 * level 19, decompresses it and checks the round trip; prints the sizes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zstd.h"

static const char *words[] = {"the", "profile", "of", "a", "program", "sampled", "at",
    "one", "thousand", "hertz", "stack", "frame", "pointer", "unwind", "table", "call",
    "graph", "inclusive", "time", "function", "library", "object", "interpreter", "database"};

int main(int argc, char **argv) {
    size_t n = (size_t)(argc > 1 ? atoi(argv[1]) : 8) * 256 * 1024;
    char *src = malloc(n);
    unsigned seed = 12345;
    size_t i = 0;
    while (i < n) {
        seed = seed * 1103515245u + 12345u;
        const char *w = words[(seed >> 8) % (sizeof words / sizeof *words)];
        size_t len = strlen(w);
        for (size_t k = 0; k < len && i < n; k++)
            src[i++] = w[k];
        if (i < n)
            src[i++] = (seed >> 20) % 11 == 0 ? '\n' : ' ';
    }
    size_t cap = ZSTD_compressBound(n);
    char *dst = malloc(cap), *back = malloc(n);
    size_t c = ZSTD_compress(dst, cap, src, n, 19);
    if (ZSTD_isError(c)) {
        fprintf(stderr, "zstd-driver: %s\n", ZSTD_getErrorName(c));
        return 1;
    }
    size_t d = ZSTD_decompress(back, n, dst, c);
    if (ZSTD_isError(d) || d != n || memcmp(back, src, n) != 0) {
        fprintf(stderr, "zstd-driver: round trip failed\n");
        return 1;
    }
    printf("%zu -> %zu bytes\n", n, c);
    return 0;
}
