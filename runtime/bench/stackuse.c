/* How deep the sampling handler reaches into the stack of the thread it interrupts: a thread
 * on a stack of our own, filled with a pattern, runs plug_work (fixtures/runtime/plug.c) from
 * the shared object given; afterwards the first byte that is no longer the pattern tells the
 * deepest use (thread start and static TLS, plug_work, and every signal frame and handler run
 * on that stack). Compare the figure without and with the runtime preloaded; with
 * PROFIL_RANGES=all the first sample in the plugin registers it from the handler.
 * Usage: stackuse /abs/path/libplug.so   (build: gcc -O2 -pthread -o stackuse stackuse.c) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE (256 * 1024)

static void (*work)(long);

static void *run(void *arg) {
    (void)arg;
    work(40);
    return NULL;
}

int main(int argc, char **argv) {
    void *lib = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
    if (!lib || !(work = (void (*)(long))dlsym(lib, "plug_work"))) {
        fprintf(stderr, "usage: stackuse /abs/path/libplug.so (%s)\n", dlerror());
        return 2;
    }
    unsigned char *stack = aligned_alloc(4096, SIZE);
    memset(stack, 0xAA, SIZE);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstack(&a, stack, SIZE);
    pthread_t t;
    if (pthread_create(&t, &a, run, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 1;
    size_t untouched = 0;
    while (untouched < SIZE && stack[untouched] == 0xAA)
        untouched++;
    printf("deepest stack use: %zu bytes\n", SIZE - untouched);
    return 0;
}
