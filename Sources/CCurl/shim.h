#ifndef PC_CURL_SHIM_H
#define PC_CURL_SHIM_H
#include <curl/curl.h>

/* Typed wrappers for libcurl's variadic setopt/getinfo calls and for macros Swift cannot import.
 * Only the Upstream target imports this module. Every wrapper names the argument kind it passes, so a wrong
 * kind is a compile error in Swift instead of undefined behaviour in C. */

/* ---- curl_easy_setopt by argument kind ---- */
static inline CURLcode pc_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode pc_curl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
/* libcurl copies string arguments (since 7.17), so the Swift caller's buffer may be temporary. */
static inline CURLcode pc_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode pc_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
/* The list is NOT copied: it must outlive the transfer. */
static inline CURLcode pc_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode pc_curl_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback fn) {
    return curl_easy_setopt(handle, option, fn); /* CURLOPT_WRITEFUNCTION or CURLOPT_HEADERFUNCTION */
}
static inline CURLcode pc_curl_easy_setopt_read_function(CURL *handle, curl_read_callback fn) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, fn);
}
static inline CURLcode pc_curl_easy_setopt_seek_function(CURL *handle, curl_seek_callback fn) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, fn);
}
static inline CURLcode pc_curl_easy_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback fn) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, fn);
}
static inline CURLcode pc_curl_easy_setopt_closesocket_function(CURL *handle, curl_closesocket_callback fn) {
    return curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, fn);
}

/* ---- curl_easy_getinfo by result kind ---- */
static inline CURLcode pc_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *out) {
    return curl_easy_getinfo(handle, info, out);
}
static inline CURLcode pc_curl_easy_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *out) {
    return curl_easy_getinfo(handle, info, out);
}
static inline CURLcode pc_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **out) {
    return curl_easy_getinfo(handle, info, out);
}

/* ---- curl_multi_setopt by argument kind ---- */
static inline CURLMcode pc_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLMcode pc_curl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLMcode pc_curl_multi_setopt_socket_function(CURLM *multi, curl_socket_callback fn) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, fn);
}
static inline CURLMcode pc_curl_multi_setopt_timer_function(CURLM *multi, curl_multi_timer_callback fn) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, fn);
}

/* ---- CURLMsg (the result lives in a union) ---- */
static inline int pc_curl_msg_is_done(const CURLMsg *msg) { return msg->msg == CURLMSG_DONE; }
static inline CURLcode pc_curl_msg_result(const CURLMsg *msg) { return msg->data.result; }

/* ---- macros ---- */
static inline size_t pc_curl_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }
static inline size_t pc_curl_readfunc_pause(void) { return CURL_READFUNC_PAUSE; }
static inline size_t pc_curl_readfunc_abort(void) { return CURL_READFUNC_ABORT; }
static inline int pc_curl_pause_recv(void) { return CURLPAUSE_RECV; }
static inline int pc_curl_pause_send(void) { return CURLPAUSE_SEND; }
static inline int pc_curl_pause_cont(void) { return CURLPAUSE_CONT; }
static inline curl_socket_t pc_curl_socket_timeout(void) { return CURL_SOCKET_TIMEOUT; }
static inline long pc_curl_global_default(void) { return CURL_GLOBAL_DEFAULT; }
#endif
