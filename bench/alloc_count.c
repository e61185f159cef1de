/* Counting allocator for bench/request_cost.py: preloaded into the gateway (LD_PRELOAD), it counts every
 * allocation call and hands the calls on to glibc's own allocator. On SIGUSR2 it writes
 * "allocations frees bytes" to the file named by $ALLOC_COUNT_FILE, so a driver can take the difference
 * across a load run and divide by the requests served. Measurement only: never shipped. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static unsigned long long allocations, frees, bytes;

static inline void count(size_t size) {
    __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&bytes, size, __ATOMIC_RELAXED);
}

void *malloc(size_t size) { count(size); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(n * size); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { count(size); return __libc_realloc(p, size); }
void *memalign(size_t alignment, size_t size) { count(size); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count(size); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    count(size);
    void *p = __libc_memalign(alignment, size);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}
void free(void *p) {
    if (p) __atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
    __libc_free(p);
}

static void dump(int signal) {
    (void)signal;
    const char *path = getenv("ALLOC_COUNT_FILE");
    if (!path) return;
    char line[96];
    int n = snprintf(line, sizeof line, "%llu %llu %llu\n", __atomic_load_n(&allocations, __ATOMIC_RELAXED),
                     __atomic_load_n(&frees, __ATOMIC_RELAXED), __atomic_load_n(&bytes, __ATOMIC_RELAXED));
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    if (write(fd, line, (size_t)n) < 0) { /* nothing to do */ }
    close(fd);
}

__attribute__((constructor)) static void install(void) { signal(SIGUSR2, dump); }
