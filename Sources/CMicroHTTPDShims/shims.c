#define _GNU_SOURCE
#include "CMicroHTTPDShims.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>

/* Connections accepted beyond the limit, so that each can be answered (503 for a wait)
   rather than left unanswered; more wait in the listen backlog until one closes. */
#define OVERFLOW_CONNECTIONS 64u
/* Seconds a connection beyond the limit may stay silent. */
#define OVERFLOW_IDLE_TIMEOUT 2u
/* Descriptors left to the rest of the process (the APNs listeners, files, the log). */
#define DESCRIPTOR_RESERVE 256u
/* Each connection thread runs one handler; its stack is reserved, not used, so a thousand cost
   little memory. Not smaller: a payload nested as deep as the JSON parser allows is written
   back recursively, about 340 KB deep in a debug build. */
#define CONNECTION_STACK_SIZE ((size_t)512 * 1024)

struct fakeapns_http_server {
    struct MHD_Daemon *daemon;
    fakeapns_http_handler handler;
    void *context;
    size_t maximum_body;
    atomic_long open_requests;
    /* Requests whose handler was called and whose answer has not left yet. */
    pthread_mutex_t answering_lock;
    pthread_cond_t answering_done;
    long answering;
    /* The last message libmicrohttpd logged, for a start that fails. */
    pthread_mutex_t log_lock;
    char log[256];
    /* Connections are accepted here, not by libmicrohttpd, whose listen thread polls the
       listening socket again at once after accept() fails (EMFILE), spinning a core, and
       closes a connection over its limit without a word. This thread accepts only while
       there is room, waits when descriptors run out, and hands each connection over. */
    int listen_fd;
    int wake[2];
    pthread_t acceptor;
    unsigned connection_limit;
    unsigned overflow_limit;
    /* Protected by slots_lock: */
    pthread_mutex_t slots_lock;
    pthread_cond_t slot_freed;
    unsigned handed_over; /* accepted and not closed yet */
    unsigned open;        /* started and not closed yet */
    int stopping;
};

/* What a connection's socket context points at: one of these two. */
static char within_limit;
static char beyond_limit;

/* One request, from its request line to its end. */
struct request_state {
    char *target;
    char *body;
    size_t length;
    int headers_seen;
    int too_large;
    int dispatched;
};

static void log_message(void *cls, const char *format, va_list arguments) {
    struct fakeapns_http_server *server = cls;
    pthread_mutex_lock(&server->log_lock);
    vsnprintf(server->log, sizeof server->log, format, arguments);
    size_t length = strlen(server->log);
    while (length > 0 && (server->log[length - 1] == '\n' || server->log[length - 1] == '.')) {
        server->log[--length] = '\0';
    }
    pthread_mutex_unlock(&server->log_lock);
}

/* Called once per request with the request-target as sent: its state starts here,
   so the handler sees the raw path and query. */
static void *request_began(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)connection;
    struct fakeapns_http_server *server = cls;
    struct request_state *state = calloc(1, sizeof *state);
    if (state == NULL) return NULL;
    state->target = strdup(uri != NULL ? uri : "");
    if (state->target == NULL) {
        free(state);
        return NULL;
    }
    atomic_fetch_add(&server->open_requests, 1);
    return state;
}

static void request_ended(void *cls, struct MHD_Connection *connection, void **con_cls,
                          enum MHD_RequestTerminationCode code) {
    (void)connection;
    (void)code;
    struct fakeapns_http_server *server = cls;
    struct request_state *state = *con_cls;
    if (state == NULL) return;
    if (state->dispatched) {
        pthread_mutex_lock(&server->answering_lock);
        if (--server->answering == 0) pthread_cond_broadcast(&server->answering_done);
        pthread_mutex_unlock(&server->answering_lock);
    }
    free(state->target);
    free(state->body);
    free(state);
    *con_cls = NULL;
    atomic_fetch_sub(&server->open_requests, 1);
}

/* Whether a Content-Length header declares more than `limit` bytes. Malformed
   values never get here: libmicrohttpd answers them 400 itself. */
static int declares_more_than(const char *length, size_t limit) {
    unsigned long long value = 0;
    for (const char *digit = length; *digit >= '0' && *digit <= '9'; digit++) {
        value = value * 10 + (unsigned long long)(*digit - '0');
        if (value > limit) return 1;
    }
    return 0;
}

static enum MHD_Result dispatch(struct fakeapns_http_server *server, struct MHD_Connection *connection,
                                const char *method, struct request_state *state) {
    if (!state->dispatched) {
        state->dispatched = 1;
        pthread_mutex_lock(&server->answering_lock);
        server->answering++;
        pthread_mutex_unlock(&server->answering_lock);
    }
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    int beyond = info != NULL && info->socket_context == &beyond_limit;
    int queued = server->handler(server->context, connection, method, state->target, state->body, state->length,
                                 state->too_large, beyond);
    return queued ? MHD_YES : MHD_NO;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url,
                                      const char *method, const char *version, const char *upload_data,
                                      size_t *upload_data_size, void **con_cls) {
    (void)url;
    (void)version;
    struct fakeapns_http_server *server = cls;
    struct request_state *state = *con_cls;
    if (state == NULL) return MHD_NO;
    if (!state->headers_seen) {
        state->headers_seen = 1;
        const char *length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (length != NULL && declares_more_than(length, server->maximum_body)) {
            /* Answered before the body is read; libmicrohttpd then closes the connection. */
            state->too_large = 1;
            return dispatch(server, connection, method, state);
        }
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        size_t size = *upload_data_size;
        *upload_data_size = 0;
        if (size > server->maximum_body - state->length) {
            /* A chunked body past the limit: stop reading and close. */
            return MHD_NO;
        }
        char *grown = realloc(state->body, state->length + size);
        if (grown == NULL) return MHD_NO;
        memcpy(grown + state->length, upload_data, size);
        state->body = grown;
        state->length += size;
        return MHD_YES;
    }
    return dispatch(server, connection, method, state);
}

static int is_ipv6_any(const struct sockaddr *address) {
    if (address->sa_family != AF_INET6) return 0;
    const struct sockaddr_in6 *ipv6 = (const struct sockaddr_in6 *)address;
    return memcmp(&ipv6->sin6_addr, &in6addr_any, sizeof in6addr_any) == 0;
}

/* Counts the connections libmicrohttpd serves, marks those beyond the limit (they get a short
   idle timeout and one answer), and wakes the acceptor when one closes. */
static void connection_changed(void *cls, struct MHD_Connection *connection, void **socket_context,
                               enum MHD_ConnectionNotificationCode code) {
    struct fakeapns_http_server *server = cls;
    pthread_mutex_lock(&server->slots_lock);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        server->open++;
        int beyond = server->open > server->connection_limit;
        *socket_context = beyond ? &beyond_limit : &within_limit;
        pthread_mutex_unlock(&server->slots_lock);
        if (beyond) MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, OVERFLOW_IDLE_TIMEOUT);
        return;
    }
    server->open--;
    server->handed_over--;
    pthread_cond_signal(&server->slot_freed);
    pthread_mutex_unlock(&server->slots_lock);
}

/* Waits until a connection closes, the server stops, or `milliseconds` pass (0: no limit).
   Called with slots_lock held. */
static void wait_for_slot(struct fakeapns_http_server *server, long milliseconds) {
    if (milliseconds == 0) {
        pthread_cond_wait(&server->slot_freed, &server->slots_lock);
        return;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_nsec += milliseconds * 1000000L;
    deadline.tv_sec += deadline.tv_nsec / 1000000000L;
    deadline.tv_nsec %= 1000000000L;
    pthread_cond_timedwait(&server->slot_freed, &server->slots_lock, &deadline);
}

static void *accept_connections(void *cls) {
    struct fakeapns_http_server *server = cls;
    for (;;) {
        pthread_mutex_lock(&server->slots_lock);
        /* Full: the clients beyond wait in the listen backlog, costing nothing here. */
        while (!server->stopping && server->handed_over >= server->connection_limit + server->overflow_limit) {
            wait_for_slot(server, 0);
        }
        int stopping = server->stopping;
        pthread_mutex_unlock(&server->slots_lock);
        if (stopping) break;

        struct pollfd descriptors[2] = {
            {.fd = server->listen_fd, .events = POLLIN, .revents = 0},
            {.fd = server->wake[0], .events = POLLIN, .revents = 0},
        };
        if (poll(descriptors, 2, -1) < 0) continue;
        if (descriptors[1].revents != 0) break;
        struct sockaddr_storage address;
        socklen_t length = sizeof address;
        int client = accept4(server->listen_fd, (struct sockaddr *)&address, &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (client < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED) continue;
            /* Out of descriptors (or memory): the connection stays queued; try again when one
               of ours closes, or after a while, since the shortage may be elsewhere. */
            pthread_mutex_lock(&server->slots_lock);
            if (!server->stopping) wait_for_slot(server, 250);
            pthread_mutex_unlock(&server->slots_lock);
            continue;
        }
        pthread_mutex_lock(&server->slots_lock);
        server->handed_over++;
        pthread_mutex_unlock(&server->slots_lock);
        if (MHD_add_connection(server->daemon, client, (struct sockaddr *)&address, length) != MHD_YES) {
            /* libmicrohttpd closed it without starting it. */
            pthread_mutex_lock(&server->slots_lock);
            server->handed_over--;
            pthread_mutex_unlock(&server->slots_lock);
        }
    }
    return NULL;
}

/* Sets the limits to fit the descriptors: the soft RLIMIT_NOFILE is raised (up to the hard
   one) when the connections and the reserve need more; when even the hard one is short, the
   connections share what the reserve leaves (half the descriptors at least), a fifth of them
   beyond the limit. */
static void fit_descriptors(struct fakeapns_http_server *server, unsigned wanted) {
    server->connection_limit = wanted;
    server->overflow_limit = OVERFLOW_CONNECTIONS;
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
    rlim_t needed = (rlim_t)wanted + OVERFLOW_CONNECTIONS + DESCRIPTOR_RESERVE;
    if (limit.rlim_cur < needed) {
        struct rlimit raised = {
            .rlim_cur = limit.rlim_max == RLIM_INFINITY || limit.rlim_max > needed ? needed : limit.rlim_max,
            .rlim_max = limit.rlim_max,
        };
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit.rlim_cur = raised.rlim_cur;
    }
    if (limit.rlim_cur >= needed) return;
    rlim_t left = limit.rlim_cur > 2 * DESCRIPTOR_RESERVE ? limit.rlim_cur - DESCRIPTOR_RESERVE : limit.rlim_cur / 2;
    server->overflow_limit = (unsigned)(left / 5 < OVERFLOW_CONNECTIONS ? left / 5 : OVERFLOW_CONNECTIONS);
    server->connection_limit = left > server->overflow_limit + 1 ? (unsigned)(left - server->overflow_limit) : 1;
}

/* A listening socket on the first address of `host`, or -1 with the reason in `error`. */
static int open_listener(const char *host, int port, char *error, size_t error_capacity) {
    char bare[256];
    size_t host_length = strlen(host);
    if (host_length >= sizeof bare) {
        snprintf(error, error_capacity, "host name too long");
        return -1;
    }
    if (host_length >= 2 && host[0] == '[' && host[host_length - 1] == ']') {
        memcpy(bare, host + 1, host_length - 2);
        bare[host_length - 2] = '\0';
    } else {
        memcpy(bare, host, host_length + 1);
    }
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    struct addrinfo *addresses = NULL;
    int status = getaddrinfo(bare[0] != '\0' ? bare : NULL, service, &hints, &addresses);
    if (status != 0 || addresses == NULL) {
        snprintf(error, error_capacity, "resolving %s: %s", host, gai_strerror(status));
        return -1;
    }
    int listener = socket(addresses->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const char *step = "socket";
    if (listener >= 0) {
        int on = 1;
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        if (addresses->ai_family == AF_INET6) {
            /* "::" takes IPv4 too, as an unspecified address means. */
            int only = !is_ipv6_any(addresses->ai_addr);
            setsockopt(listener, IPPROTO_IPV6, IPV6_V6ONLY, &only, sizeof only);
        }
        if (bind(listener, addresses->ai_addr, addresses->ai_addrlen) != 0) {
            step = "bind";
        } else if (listen(listener, SOMAXCONN) != 0) {
            step = "listen";
        } else {
            freeaddrinfo(addresses);
            return listener;
        }
    }
    snprintf(error, error_capacity, "%s: %s", step, strerror(errno));
    if (listener >= 0) close(listener);
    freeaddrinfo(addresses);
    return -1;
}

static void destroy(struct fakeapns_http_server *server) {
    if (server->listen_fd >= 0) close(server->listen_fd);
    if (server->wake[0] >= 0) close(server->wake[0]);
    if (server->wake[1] >= 0) close(server->wake[1]);
    pthread_mutex_destroy(&server->log_lock);
    pthread_mutex_destroy(&server->answering_lock);
    pthread_cond_destroy(&server->answering_done);
    pthread_mutex_destroy(&server->slots_lock);
    pthread_cond_destroy(&server->slot_freed);
    free(server);
}

static void init_monotonic_condition(pthread_cond_t *condition) {
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(condition, &monotonic);
    pthread_condattr_destroy(&monotonic);
}

fakeapns_http_server *fakeapns_http_start(const char *host, int port, unsigned connection_limit,
                                          unsigned idle_timeout_seconds, size_t maximum_body,
                                          fakeapns_http_handler handler, void *context, char *error,
                                          size_t error_capacity) {
    struct fakeapns_http_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        snprintf(error, error_capacity, "out of memory");
        return NULL;
    }
    server->handler = handler;
    server->context = context;
    server->maximum_body = maximum_body;
    fit_descriptors(server, connection_limit > 0 ? connection_limit : 1);
    server->wake[0] = server->wake[1] = -1;
    atomic_init(&server->open_requests, 0);
    pthread_mutex_init(&server->log_lock, NULL);
    pthread_mutex_init(&server->answering_lock, NULL);
    init_monotonic_condition(&server->answering_done);
    pthread_mutex_init(&server->slots_lock, NULL);
    init_monotonic_condition(&server->slot_freed);

    server->listen_fd = open_listener(host, port, error, error_capacity);
    if (server->listen_fd < 0) {
        destroy(server);
        return NULL;
    }
    if (pipe2(server->wake, O_CLOEXEC) != 0) {
        snprintf(error, error_capacity, "pipe: %s", strerror(errno));
        destroy(server);
        return NULL;
    }

    /* One thread per connection, so a handler may block (waiting for a notification)
       while the other connections are served; poll(), so descriptors above
       FD_SETSIZE work. libmicrohttpd's own limit stays above what the acceptor hands
       over, since it counts a closed connection until its thread is cleaned up. */
    unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                         MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ERROR_LOG;
    server->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, access_handler, server,
        MHD_OPTION_CONNECTION_LIMIT, 2 * (server->connection_limit + server->overflow_limit),
        MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds,
        MHD_OPTION_THREAD_STACK_SIZE, CONNECTION_STACK_SIZE,
        MHD_OPTION_URI_LOG_CALLBACK, request_began, server,
        MHD_OPTION_NOTIFY_COMPLETED, request_ended, server,
        MHD_OPTION_NOTIFY_CONNECTION, connection_changed, server,
        MHD_OPTION_EXTERNAL_LOGGER, log_message, server,
        MHD_OPTION_END);
    if (server->daemon == NULL) {
        pthread_mutex_lock(&server->log_lock);
        snprintf(error, error_capacity, "%s", server->log[0] != '\0' ? server->log : "libmicrohttpd did not start");
        pthread_mutex_unlock(&server->log_lock);
        destroy(server);
        return NULL;
    }
    int failure = pthread_create(&server->acceptor, NULL, accept_connections, server);
    if (failure != 0) {
        snprintf(error, error_capacity, "starting the accepting thread: %s", strerror(failure));
        MHD_stop_daemon(server->daemon);
        destroy(server);
        return NULL;
    }
    pthread_setname_np(server->acceptor, "control-accept");
    return server;
}

int fakeapns_http_port(const fakeapns_http_server *server) {
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    if (getsockname(server->listen_fd, (struct sockaddr *)&address, &length) != 0) return 0;
    if (address.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&address)->sin_port);
    if (address.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&address)->sin6_port);
    return 0;
}

unsigned fakeapns_http_connection_limit(const fakeapns_http_server *server) {
    return server->connection_limit;
}

unsigned fakeapns_http_open_connections(fakeapns_http_server *server) {
    pthread_mutex_lock(&server->slots_lock);
    unsigned open = server->open;
    pthread_mutex_unlock(&server->slots_lock);
    return open;
}

long fakeapns_http_open_requests(const fakeapns_http_server *server) {
    return atomic_load(&((struct fakeapns_http_server *)server)->open_requests);
}

void fakeapns_http_close_listener(fakeapns_http_server *server) {
    if (server->listen_fd < 0) return;
    pthread_mutex_lock(&server->slots_lock);
    server->stopping = 1;
    pthread_cond_signal(&server->slot_freed);
    pthread_mutex_unlock(&server->slots_lock);
    char byte = 0;
    while (write(server->wake[1], &byte, 1) < 0 && errno == EINTR) {
    }
    pthread_join(server->acceptor, NULL);
    close(server->listen_fd);
    server->listen_fd = -1;
}

int fakeapns_http_drain(fakeapns_http_server *server, long timeout_milliseconds) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_milliseconds / 1000;
    deadline.tv_nsec += (timeout_milliseconds % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&server->answering_lock);
    int status = 0;
    while (server->answering > 0 && status != ETIMEDOUT) {
        status = pthread_cond_timedwait(&server->answering_done, &server->answering_lock, &deadline);
    }
    int drained = server->answering == 0;
    pthread_mutex_unlock(&server->answering_lock);
    return drained;
}

void fakeapns_http_stop(fakeapns_http_server *server) {
    fakeapns_http_close_listener(server);
    MHD_stop_daemon(server->daemon);
    destroy(server);
}


struct header_visit {
    fakeapns_http_header_visitor visitor;
    void *context;
};

static enum MHD_Result visit_header(void *cls, enum MHD_ValueKind kind, const char *name, const char *value) {
    (void)kind;
    struct header_visit *visit = cls;
    visit->visitor(visit->context, name, value != NULL ? value : "");
    return MHD_YES;
}

void fakeapns_http_headers(struct MHD_Connection *connection, fakeapns_http_header_visitor visitor, void *context) {
    struct header_visit visit = {visitor, context};
    MHD_get_connection_values(connection, MHD_HEADER_KIND, visit_header, &visit);
}

int fakeapns_http_peer_closed(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == NULL) return 0;
    struct pollfd descriptor = {.fd = info->connect_fd, .events = POLLRDHUP, .revents = 0};
    if (poll(&descriptor, 1, 0) <= 0) return 0;
    return (descriptor.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

/* Adds each "Name: value\n" line of `lines`. */
static int add_header_lines(struct MHD_Response *response, const char *lines) {
    char name[128];
    char value[1024];
    while (*lines != '\0') {
        const char *colon = strchr(lines, ':');
        const char *end = strchr(lines, '\n');
        if (colon == NULL || end == NULL || colon > end) return 0;
        size_t name_length = (size_t)(colon - lines);
        const char *start = colon + 1;
        while (*start == ' ') start++;
        size_t value_length = (size_t)(end - start);
        if (name_length >= sizeof name || value_length >= sizeof value) return 0;
        memcpy(name, lines, name_length);
        name[name_length] = '\0';
        memcpy(value, start, value_length);
        value[value_length] = '\0';
        if (MHD_add_response_header(response, name, value) != MHD_YES) return 0;
        lines = end + 1;
    }
    return 1;
}

int fakeapns_http_respond(struct MHD_Connection *connection, unsigned status, const char *content_type,
                          const char *allow, const char *headers, const void *body, size_t length) {
    struct MHD_Response *response = MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (response == NULL) return 0;
    int ok = MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store") == MHD_YES;
    if (ok && headers != NULL) ok = add_header_lines(response, headers);
    if (ok && content_type != NULL) {
        ok = MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) == MHD_YES;
    }
    if (ok && allow != NULL) {
        ok = MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, allow) == MHD_YES;
    }
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (ok && info != NULL && info->socket_context == &beyond_limit) {
        /* One answer each beyond the limit, so that they make room. */
        ok = MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close") == MHD_YES;
    }
    if (ok) ok = MHD_queue_response(connection, status, response) == MHD_YES;
    MHD_destroy_response(response);
    return ok;
}
