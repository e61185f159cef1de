// libcurl alone, as a proxy would drive it: the CPU a bare client spends per transfer (bench/NOTES.md, "What
// S16's target leaves the gateway"). S16 compares the gateway with nginx, which proxies without libcurl; this
// measures what libcurl costs before any gateway work, so the gap splits into what the fixed stack costs and what
// the gateway adds.
//
//   cc -O2 -o curl_floor bench/curl_floor.c -lcurl
//   ./curl_floor URL TRANSFERS CONCURRENT [keep]
//
// It drives libcurl the way the gateway's event loops do: one multi handle, curl's sockets in an epoll set
// (CURLMOPT_SOCKETFUNCTION / CURLMOPT_TIMERFUNCTION, curl_multi_socket_action), CONCURRENT keep-alive transfers in
// flight, and each easy handle reset and set up again before it is reused (`keep`: set up once and reused as it
// is, to price the reset). Bodies and headers are counted, not kept. The first 4 × CONCURRENT transfers warm the
// connections and are not measured. Prints one JSON object: CPU (user + system) per measured transfer in µs, and
// transfers per second. Exits 1 on any failed transfer.
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>

static int epoll_fd;
static long timer_ms = -1;  // curl's requested timeout: -1 none, 0 run now
static size_t body_bytes;
static int keep_options;

static size_t count_body(char *data, size_t size, size_t count, void *user) {
    (void)data, (void)user;
    body_bytes += size * count;
    return size * count;
}

static size_t skip_header(char *data, size_t size, size_t count, void *user) {
    (void)data, (void)user;
    return size * count;
}

static int watch_socket(CURL *easy, curl_socket_t socket, int what, void *user, void *socket_user) {
    (void)easy, (void)user, (void)socket_user;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, socket, NULL);
        return 0;
    }
    struct epoll_event event = {.events = 0, .data.fd = socket};
    if (what & CURL_POLL_IN) event.events |= EPOLLIN;
    if (what & CURL_POLL_OUT) event.events |= EPOLLOUT;
    if (epoll_ctl(epoll_fd, EPOLL_CTL_MOD, socket, &event) != 0) epoll_ctl(epoll_fd, EPOLL_CTL_ADD, socket, &event);
    return 0;
}

static int set_timer(CURLM *multi, long milliseconds, void *user) {
    (void)multi, (void)user;
    timer_ms = milliseconds;
    return 0;
}

static void prepare(CURL *easy, const char *url, int first) {
    if (!first && keep_options) return;
    curl_easy_reset(easy);
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, count_body);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, skip_header);
    curl_easy_setopt(easy, CURLOPT_PROXY, "");  // no proxy lookup in the environment per transfer
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + (double)usage.ru_stime.tv_sec +
           usage.ru_stime.tv_usec / 1e6;
}

static double wall_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + now.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "keep") != 0)) {
        fprintf(stderr, "usage: %s URL TRANSFERS CONCURRENT [keep]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1];
    int measured = atoi(argv[2]), concurrent = atoi(argv[3]);
    if (measured < 1 || concurrent < 1) return 2;
    keep_options = argc == 5;
    int warm = 4 * concurrent, total = measured + warm;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    epoll_fd = epoll_create1(0);
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, (long)concurrent);
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, watch_socket);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, set_timer);
    int started = 0, done = 0, failed = 0, running = 0;
    double cpu_start = 0, wall_start = 0;
    for (int i = 0; i < concurrent && started < total; i++, started++) {
        CURL *easy = curl_easy_init();
        prepare(easy, url, 1);
        curl_multi_add_handle(multi, easy);
    }
    while (done < total) {
        struct epoll_event events[64];
        int ready = epoll_wait(epoll_fd, events, 64, timer_ms < 0 ? 1000 : (int)timer_ms);
        for (int i = 0; i < ready; i++) {
            int mask = (events[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
                       (events[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                       (events[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
            curl_multi_socket_action(multi, events[i].data.fd, mask, &running);
        }
        if (ready == 0 || timer_ms == 0) {
            timer_ms = -1;
            curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
        }
        CURLMsg *message;
        int queued;
        while ((message = curl_multi_info_read(multi, &queued))) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *easy = message->easy_handle;
            long status = 0;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
            if (message->data.result != CURLE_OK || status != 200) failed++;
            curl_multi_remove_handle(multi, easy);
            if (++done == warm) {
                cpu_start = cpu_seconds();
                wall_start = wall_seconds();
            }
            if (started < total) {
                prepare(easy, url, 0);
                curl_multi_add_handle(multi, easy);
                started++;
            }
        }
    }
    double cpu = cpu_seconds() - cpu_start, wall = wall_seconds() - wall_start;
    printf("{\"transfers\": %d, \"concurrent\": %d, \"keep\": %s, \"failed\": %d, \"body_bytes\": %zu, "
           "\"cpu_us_per_transfer\": %.3f, \"transfers_per_second\": %.1f}\n",
           measured, concurrent, keep_options ? "true" : "false", failed, body_bytes, cpu / measured * 1e6,
           measured / wall);
    return failed ? 1 : 0;
}
