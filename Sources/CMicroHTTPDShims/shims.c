#define _GNU_SOURCE
#include "CMicroHTTPDShims.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <microhttpd.h>

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
};

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
    int queued = server->handler(server->context, connection, method, state->target, state->body, state->length,
                                 state->too_large);
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

fakeapns_http_server *fakeapns_http_start(const char *host, int port, unsigned connection_limit,
                                          unsigned idle_timeout_seconds, size_t maximum_body,
                                          fakeapns_http_handler handler, void *context, char *error,
                                          size_t error_capacity) {
    char bare[256];
    size_t host_length = strlen(host);
    if (host_length >= sizeof bare) {
        snprintf(error, error_capacity, "host name too long");
        return NULL;
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
        return NULL;
    }

    struct fakeapns_http_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        freeaddrinfo(addresses);
        snprintf(error, error_capacity, "out of memory");
        return NULL;
    }
    server->handler = handler;
    server->context = context;
    server->maximum_body = maximum_body;
    atomic_init(&server->open_requests, 0);
    pthread_mutex_init(&server->log_lock, NULL);
    pthread_mutex_init(&server->answering_lock, NULL);
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&server->answering_done, &monotonic);
    pthread_condattr_destroy(&monotonic);

    /* One thread per connection, so a handler may block (waiting for a notification)
       while the other connections are served; poll(), so descriptors above
       FD_SETSIZE work. */
    unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                         MHD_USE_ERROR_LOG;
    if (addresses->ai_family == AF_INET6) {
        flags |= is_ipv6_any(addresses->ai_addr) ? MHD_USE_DUAL_STACK : MHD_USE_IPv6;
    }
    server->daemon = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, access_handler, server,
        MHD_OPTION_SOCK_ADDR, addresses->ai_addr,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds,
        MHD_OPTION_THREAD_STACK_SIZE, (size_t)(1024 * 1024),
        MHD_OPTION_URI_LOG_CALLBACK, request_began, server,
        MHD_OPTION_NOTIFY_COMPLETED, request_ended, server,
        MHD_OPTION_EXTERNAL_LOGGER, log_message, server,
        MHD_OPTION_END);
    freeaddrinfo(addresses);
    if (server->daemon == NULL) {
        pthread_mutex_lock(&server->log_lock);
        snprintf(error, error_capacity, "%s", server->log[0] != '\0' ? server->log : "libmicrohttpd did not start");
        pthread_mutex_unlock(&server->log_lock);
        pthread_mutex_destroy(&server->log_lock);
        pthread_mutex_destroy(&server->answering_lock);
        pthread_cond_destroy(&server->answering_done);
        free(server);
        return NULL;
    }
    return server;
}

int fakeapns_http_port(const fakeapns_http_server *server) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info != NULL ? (int)info->port : 0;
}

long fakeapns_http_open_requests(const fakeapns_http_server *server) {
    return atomic_load(&((struct fakeapns_http_server *)server)->open_requests);
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
    MHD_stop_daemon(server->daemon);
    pthread_mutex_destroy(&server->log_lock);
    pthread_mutex_destroy(&server->answering_lock);
    pthread_cond_destroy(&server->answering_done);
    free(server);
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

int fakeapns_http_respond(struct MHD_Connection *connection, unsigned status, const char *content_type,
                          const char *allow, const void *body, size_t length) {
    struct MHD_Response *response = MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (response == NULL) return 0;
    int ok = MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store") == MHD_YES;
    if (ok && content_type != NULL) {
        ok = MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) == MHD_YES;
    }
    if (ok && allow != NULL) {
        ok = MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, allow) == MHD_YES;
    }
    if (ok) ok = MHD_queue_response(connection, status, response) == MHD_YES;
    MHD_destroy_response(response);
    return ok;
}
