// Counting allocator for allocation-per-operation figures (bench/NOTES.md "Rules evaluation").
//   cc -O2 -shared -fPIC -o /tmp/malloc-count.so bench/malloc-count.c
//   LD_PRELOAD=/tmp/malloc-count.so Fuzz/.build/release/rules-bench Tests/RulesTests/Fixtures/bench
// Every malloc/calloc/realloc/posix_memalign/aligned_alloc/memalign call in the process is counted and forwarded
// to glibc's own implementation. A benchmark reads the total through `pc_malloc_count()`, found with dlsym, so
// the same binary runs unchanged without the preload (it then reports no allocation figures).
#include <stddef.h>
#include <stdatomic.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static _Atomic unsigned long long count;

unsigned long long pc_malloc_count(void) { return atomic_load_explicit(&count, memory_order_relaxed); }

static inline void bump(void) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); }

void *malloc(size_t n) { bump(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { bump(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { bump(); return __libc_realloc(p, n); }
void *memalign(size_t a, size_t n) { bump(); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { bump(); return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    bump();
    void *p = __libc_memalign(a, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}
