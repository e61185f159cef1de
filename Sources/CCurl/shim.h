#ifndef PC_CURL_SHIM_H
#define PC_CURL_SHIM_H
#include <curl/curl.h>
/* Typed wrappers for libcurl's variadic setopt/getinfo calls live here (pc_curl_*). */
#endif
