// The control API's HTTP/1.1 server runs on GNU libmicrohttpd; the server itself is Swift
// (FakeAPNsDaemon's HTTPServer), which makes its responses and reads headers with libmicrohttpd
// directly. This shim holds what Swift cannot call: the variadic MHD_start_daemon,
// MHD_set_connection_option and MHD_get_connection_info, POLLRDHUP, and the access handler's
// per-call state (the body collected across its calls, the suspension while Swift answers).
#ifndef FAKEAPNS_MICROHTTPD_SHIMS_H
#define FAKEAPNS_MICROHTTPD_SHIMS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct MHD_Connection;
struct MHD_Response;

/// A running daemon: libmicrohttpd's and what its callbacks need.
typedef struct fakeapns_http_server fakeapns_http_server;

/// One request, from its request line until it is finished.
typedef struct fakeapns_http_request fakeapns_http_request;

/// What the server calls, each on libmicrohttpd's polling thread.
typedef struct {
    void *context;
    /// A request is complete (or its headers declared a body over the limit: `body_too_large`).
    /// `target` is the request-target as sent. It answers now or later, from any thread, with
    /// `fakeapns_http_answer`; the connection is suspended meanwhile (no thread waits for it).
    void (*request)(void *context, struct MHD_Connection *connection, fakeapns_http_request *request,
                    const char *method, const char *target, const char *body, size_t body_length,
                    int body_too_large, int beyond_limit);
    /// A request is finished: its answer has left (`delivered`), or its connection ended first.
    /// `token` is what its answer carried (NULL when it was not answered).
    void (*finished)(void *context, void *token, int delivered);
    /// A connection started (`started`, returns whether it is beyond the connection limit) or closed.
    int (*connection)(void *context, int started);
} fakeapns_http_callbacks;

/// Starts libmicrohttpd's polling thread (epoll, `stack_size` bytes of stack) serving the
/// connections handed over with `fakeapns_http_add_connection`, each closed after
/// `idle_timeout_seconds` without traffic (2 seconds when beyond the limit). Bodies are kept up
/// to `maximum_body` bytes; a chunked body past it closes the connection. NULL on failure, with
/// the reason in `error`.
fakeapns_http_server *fakeapns_http_start(unsigned connection_capacity, unsigned idle_timeout_seconds,
                                          size_t maximum_body, size_t stack_size,
                                          fakeapns_http_callbacks callbacks, char *error, size_t error_capacity);

/// Hands an accepted (non-blocking) socket over; 0 when libmicrohttpd closed it instead.
int fakeapns_http_add_connection(fakeapns_http_server *server, int socket);

/// Closes every connection, joins the polling thread and frees the server. Every request
/// must have been answered first (a suspended one is an error for libmicrohttpd).
void fakeapns_http_stop(fakeapns_http_server *server);

/// The connection's socket.
int fakeapns_http_socket(struct MHD_Connection *connection);

/// The poll() events that say a peer closed or reset its connection.
short fakeapns_http_peer_closed_events(void);

/// Answers `request` once with `response` (made with libmicrohttpd, given over), from any
/// thread; beyond the connection limit it gets `Connection: close`. `token` comes back to
/// `finished`. NULL closes the connection without an answer (its client left, or the server
/// stops). Returns 0 when nothing was queued.
int fakeapns_http_answer(fakeapns_http_request *request, unsigned status, struct MHD_Response *response, void *token);

#endif
