#ifndef PC_EPOLL_SHIM_H
#define PC_EPOLL_SHIM_H
/* Linux readiness, wake-up and thread-naming primitives for our loop threads (the HTTP event loops, an upstream
   client's own thread). Swift's Glibc module does not export these headers; this module exposes them to exactly one
   Swift target, PortcullisCore, whose EpollSet is the one user. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
/* Names the calling thread (shown by top -H, perf and gdb); prctl is variadic, which Swift cannot call. */
static inline void pc_name_current_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}
#endif
