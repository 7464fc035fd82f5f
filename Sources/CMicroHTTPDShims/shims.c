#define _GNU_SOURCE
#include "CMicroHTTPDShims.h"

#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <microhttpd.h>

/* Seconds a connection beyond the limit may stay silent. */
#define OVERFLOW_IDLE_TIMEOUT 2u

struct fakeapns_http_server {
    struct MHD_Daemon *daemon;
    fakeapns_http_callbacks callbacks;
    size_t maximum_body;
    char log[256]; /* the last message libmicrohttpd logged, for a start that fails */
};

/* Where a request is: its handler running, its connection suspended, or answered. */
enum { HANDLING, SUSPENDED, ANSWERED };

struct fakeapns_http_request {
    struct MHD_Connection *connection;
    char *target;
    char *body;
    size_t length;
    int headers_seen, too_large, dispatched, queued;
    atomic_int phase;
    struct MHD_Response *response;
    unsigned status;
    void *token;
};

/* What a connection's socket context points at. */
static char within_limit, beyond_limit;

static void log_message(void *cls, const char *format, va_list arguments) {
    struct fakeapns_http_server *server = cls;
    vsnprintf(server->log, sizeof server->log, format, arguments);
    size_t length = strlen(server->log);
    while (length > 0 && (server->log[length - 1] == '\n' || server->log[length - 1] == '.')) server->log[--length] = '\0';
}

static void *request_began(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)cls;
    struct fakeapns_http_request *request = calloc(1, sizeof *request);
    if (request == NULL) return NULL;
    request->connection = connection;
    request->target = strdup(uri != NULL ? uri : "");
    if (request->target == NULL) {
        free(request);
        return NULL;
    }
    return request;
}

static void request_ended(void *cls, struct MHD_Connection *connection, void **con_cls,
                          enum MHD_RequestTerminationCode code) {
    (void)connection;
    struct fakeapns_http_server *server = cls;
    struct fakeapns_http_request *request = *con_cls;
    if (request == NULL) return;
    if (request->dispatched) {
        server->callbacks.finished(server->callbacks.context, request->token, code == MHD_REQUEST_TERMINATED_COMPLETED_OK);
    }
    if (request->response != NULL && !request->queued) MHD_destroy_response(request->response);
    free(request->target);
    free(request->body);
    free(request);
    *con_cls = NULL;
}

/* Whether a Content-Length header declares more than `limit` bytes (malformed ones are answered
   400 by libmicrohttpd before this). */
static int declares_more_than(const char *length, size_t limit) {
    unsigned long long value = 0;
    for (const char *digit = length; *digit >= '0' && *digit <= '9'; digit++) {
        value = value * 10 + (unsigned long long)(*digit - '0');
        if (value > limit) return 1;
    }
    return 0;
}

static enum MHD_Result queue(struct fakeapns_http_request *request) {
    request->queued = 1;
    enum MHD_Result queued = MHD_queue_response(request->connection, request->status, request->response);
    MHD_destroy_response(request->response);
    return queued;
}

/* Hands a complete request to Swift; unless it answered at once, the connection is suspended
   until it does (then `fakeapns_http_answer` queues the answer and resumes it: libmicrohttpd
   takes a response for a suspended connection from any thread). */
static enum MHD_Result dispatch(struct fakeapns_http_server *server, struct MHD_Connection *connection,
                                const char *method, struct fakeapns_http_request *request) {
    request->dispatched = 1;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    int beyond = info != NULL && info->socket_context == &beyond_limit;
    server->callbacks.request(server->callbacks.context, connection, request, method, request->target, request->body,
                              request->length, request->too_large, beyond);
    if (atomic_load(&request->phase) == ANSWERED) return request->response != NULL ? queue(request) : MHD_NO;
    MHD_suspend_connection(connection);
    int handling = HANDLING;
    if (!atomic_compare_exchange_strong(&request->phase, &handling, SUSPENDED)) {
        /* Answered meanwhile, before the suspension it did not see. */
        enum MHD_Result queued = request->response != NULL ? queue(request) : MHD_NO;
        MHD_resume_connection(connection);
        return queued;
    }
    return MHD_YES;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url,
                                      const char *method, const char *version, const char *upload_data,
                                      size_t *upload_data_size, void **con_cls) {
    (void)url;
    (void)version;
    struct fakeapns_http_server *server = cls;
    struct fakeapns_http_request *request = *con_cls;
    if (request == NULL) return MHD_NO;
    if (request->dispatched) {
        /* Resumed: the answer was queued, or could not be made. */
        return request->queued ? MHD_YES : MHD_NO;
    }
    if (!request->headers_seen) {
        request->headers_seen = 1;
        const char *length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (length != NULL && declares_more_than(length, server->maximum_body)) {
            request->too_large = 1; /* answered before the body is read; the connection then closes */
            return dispatch(server, connection, method, request);
        }
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        size_t size = *upload_data_size;
        *upload_data_size = 0;
        if (size > server->maximum_body - request->length) return MHD_NO; /* a chunked body past the limit */
        char *grown = realloc(request->body, request->length + size);
        if (grown == NULL) return MHD_NO;
        memcpy(grown + request->length, upload_data, size);
        request->body = grown;
        request->length += size;
        return MHD_YES;
    }
    return dispatch(server, connection, method, request);
}

static void connection_changed(void *cls, struct MHD_Connection *connection, void **socket_context,
                               enum MHD_ConnectionNotificationCode code) {
    struct fakeapns_http_server *server = cls;
    int started = code == MHD_CONNECTION_NOTIFY_STARTED;
    int beyond = server->callbacks.connection(server->callbacks.context, started);
    if (!started) return;
    *socket_context = beyond ? &beyond_limit : &within_limit;
    if (beyond) MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, OVERFLOW_IDLE_TIMEOUT);
}

fakeapns_http_server *fakeapns_http_start(unsigned connection_capacity, unsigned idle_timeout_seconds,
                                          size_t maximum_body, size_t stack_size,
                                          fakeapns_http_callbacks callbacks, char *error, size_t error_capacity) {
    struct fakeapns_http_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        snprintf(error, error_capacity, "out of memory");
        return NULL;
    }
    server->callbacks = callbacks;
    server->maximum_body = maximum_body;
    /* One polling thread (epoll) for every connection; connections are accepted in Swift and
       handed over, so there is no listening socket here. */
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                         MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ERROR_LOG;
    server->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, access_handler, server,
        MHD_OPTION_CONNECTION_LIMIT, connection_capacity,
        MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds,
        MHD_OPTION_THREAD_STACK_SIZE, stack_size,
        MHD_OPTION_URI_LOG_CALLBACK, request_began, server,
        MHD_OPTION_NOTIFY_COMPLETED, request_ended, server,
        MHD_OPTION_NOTIFY_CONNECTION, connection_changed, server,
        MHD_OPTION_EXTERNAL_LOGGER, log_message, server,
        MHD_OPTION_END);
    if (server->daemon == NULL) {
        snprintf(error, error_capacity, "%s", server->log[0] != '\0' ? server->log : "libmicrohttpd did not start");
        free(server);
        return NULL;
    }
    return server;
}

int fakeapns_http_add_connection(fakeapns_http_server *server, int socket) {
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    if (getpeername(socket, (struct sockaddr *)&address, &length) != 0) length = 0;
    return MHD_add_connection(server->daemon, socket, (struct sockaddr *)&address, length) == MHD_YES;
}

void fakeapns_http_stop(fakeapns_http_server *server) {
    MHD_stop_daemon(server->daemon);
    free(server);
}

int fakeapns_http_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info != NULL ? info->connect_fd : -1;
}

short fakeapns_http_peer_closed_events(void) { return POLLRDHUP | POLLHUP | POLLERR; }

int fakeapns_http_answer(fakeapns_http_request *request, unsigned status, struct MHD_Response *response, void *token) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(request->connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (response != NULL && info != NULL && info->socket_context == &beyond_limit &&
        MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close") != MHD_YES) {
        MHD_destroy_response(response); /* one answer each beyond the limit, so that they make room */
        response = NULL;
    }
    request->response = response;
    request->status = status;
    request->token = token;
    if (atomic_exchange(&request->phase, ANSWERED) == SUSPENDED) {
        if (response != NULL) queue(request);
        MHD_resume_connection(request->connection);
    }
    return response != NULL;
}
