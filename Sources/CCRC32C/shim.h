#ifndef PC_CRC32C_SHIM_H
#define PC_CRC32C_SHIM_H
/* CRC-32C with the SSE4.2 `crc32` instruction, for Crypto's CRC32C (Swift cannot use the intrinsic directly).
   Header-only: the instruction is enabled per function with target("sse4.2"), so the package builds for any
   x86-64 and the Swift side calls it only after pc_cpu_has_sse42() said yes; elsewhere both are stubs and the
   slicing-by-8 tables in Swift do the work. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
/// 1 when the CPU has SSE4.2 (the `crc32` instruction computes CRC32C).
static inline int pc_cpu_has_sse42(void) {
    unsigned int eax = 1, ebx, ecx = 0, edx;
    __asm__ volatile("cpuid" : "+a"(eax), "=b"(ebx), "+c"(ecx), "=d"(edx));
    return (ecx >> 20) & 1;
}

/// Updates a raw (pre-inverted) CRC32C state over `len` bytes with the SSE4.2 instruction.
/// Only call when pc_cpu_has_sse42() returned 1.
__attribute__((target("sse4.2")))
static inline uint32_t pc_crc32c_sse42(uint32_t crc, const unsigned char *p, size_t len) {
    uint64_t c = crc;
    while (len > 0 && ((uintptr_t)p & 7) != 0) { c = __builtin_ia32_crc32qi((uint32_t)c, *p++); len--; }
    while (len >= 32) {
        uint64_t a, b, d, e;
        memcpy(&a, p, 8); memcpy(&b, p + 8, 8); memcpy(&d, p + 16, 8); memcpy(&e, p + 24, 8);
        c = __builtin_ia32_crc32di(c, a);
        c = __builtin_ia32_crc32di(c, b);
        c = __builtin_ia32_crc32di(c, d);
        c = __builtin_ia32_crc32di(c, e);
        p += 32; len -= 32;
    }
    while (len >= 8) { uint64_t a; memcpy(&a, p, 8); c = __builtin_ia32_crc32di(c, a); p += 8; len -= 8; }
    while (len > 0) { c = __builtin_ia32_crc32qi((uint32_t)c, *p++); len--; }
    return (uint32_t)c;
}
#else
static inline int pc_cpu_has_sse42(void) { return 0; }
static inline uint32_t pc_crc32c_sse42(uint32_t crc, const unsigned char *p, size_t len) { (void)p; (void)len; return crc; }
#endif

#endif
