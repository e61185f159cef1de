#ifndef PC_ZLIB_SHIM_H
#define PC_ZLIB_SHIM_H
#include <zlib.h>

/* inflateInit2 is a macro (it passes ZLIB_VERSION and sizeof(z_stream) to inflateInit2_), which Swift cannot
   import. 15 + 16: a 32 KiB window and a gzip wrapper (RFC 1952) only, no zlib or raw deflate. */
static inline int pc_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 15 + 16);
}

#endif
