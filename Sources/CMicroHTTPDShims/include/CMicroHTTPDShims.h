// The control API's HTTP/1.1 server: GNU libmicrohttpd behind plain C functions,
// because MHD_start_daemon and MHD_set_connection_option are variadic and Swift
// cannot call them. Swift sees only this header: no libmicrohttpd type but the
// opaque connection.
#ifndef FAKEAPNS_MICROHTTPD_SHIMS_H
#define FAKEAPNS_MICROHTTPD_SHIMS_H

#include <stddef.h>
#include <stdint.h>

struct MHD_Connection;

/// A running server: the daemon and what its callbacks need.
typedef struct fakeapns_http_server fakeapns_http_server;

/// Called once per request, on the connection's own thread, when the request is
/// complete (or as soon as its headers declare a body over the limit). `target`
/// is the request-target exactly as sent (path and query, still percent-encoded).
/// `body` holds `body_length` bytes (NULL when empty). `beyond_limit` is set on a
/// connection accepted beyond the connection limit: its answer closes it. The handler
/// answers with `fakeapns_http_respond` and returns what it returned; 0 closes the
/// connection.
typedef int (*fakeapns_http_handler)(void *context, struct MHD_Connection *connection, const char *method,
                                     const char *target, const char *body, size_t body_length,
                                     int body_too_large, int beyond_limit);

/// Starts a server on `host` (a name, an IPv4 or an IPv6 literal, brackets allowed)
/// and `port` (0: the system picks), one thread per connection, each closed after
/// `idle_timeout_seconds` without traffic. `connection_limit` connections are served
/// (fewer when the descriptors allow fewer: see `fakeapns_http_connection_limit`; the
/// soft RLIMIT_NOFILE is raised towards the hard one first). Up to 64 more are
/// accepted beyond it, each flagged to the handler, closed after its answer or 2 seconds of
/// silence; further clients wait in the listen backlog until a connection closes.
/// Bodies are kept up to `maximum_body` bytes: a larger declared
/// Content-Length reaches the handler at once with `body_too_large` set (the body is
/// never read); a chunked body that grows past it closes the connection. Returns
/// NULL on failure, with the reason in `error`.
fakeapns_http_server *fakeapns_http_start(const char *host, int port, unsigned connection_limit,
                                          unsigned idle_timeout_seconds, size_t maximum_body,
                                          fakeapns_http_handler handler, void *context, char *error,
                                          size_t error_capacity);

/// The port the server listens on (the real one when started with port 0).
int fakeapns_http_port(const fakeapns_http_server *server);

/// The connections served before the next ones are flagged `beyond_limit`.
unsigned fakeapns_http_connection_limit(const fakeapns_http_server *server);

/// Connections being served, those beyond the limit included.
unsigned fakeapns_http_open_connections(fakeapns_http_server *server);

/// Requests begun and not yet finished (their state is freed when they finish).
long fakeapns_http_open_requests(const fakeapns_http_server *server);

/// Waits up to `timeout_milliseconds` until every request whose handler was called
/// has finished (its answer sent, or its connection gone). Returns 1 when none is left.
int fakeapns_http_drain(fakeapns_http_server *server, long timeout_milliseconds);

/// Stops accepting and closes the listening socket; the connections open go on.
/// Safe to call twice.
void fakeapns_http_close_listener(fakeapns_http_server *server);

/// Closes the listening socket and every connection, joins every thread, and frees
/// the server. Handlers still running must return first.
void fakeapns_http_stop(fakeapns_http_server *server);

/// Receives one request header.
typedef void (*fakeapns_http_header_visitor)(void *context, const char *name, const char *value);

/// Calls `visitor` with every header of the request, in order.
void fakeapns_http_headers(struct MHD_Connection *connection, fakeapns_http_header_visitor visitor, void *context);

/// Whether the client has closed (or shut down its side of) the connection: for a
/// handler that waits, to give up when nobody is left to answer.
int fakeapns_http_peer_closed(struct MHD_Connection *connection);

/// Queues the response: `status`, `content_type` (NULL: none), an `Allow` header
/// (NULL: none), more headers as "Name: value\n" lines (NULL: none), and `length` bytes of
/// `body`, copied. Every response also says `Cache-Control: no-store`. Returns 1 when queued.
int fakeapns_http_respond(struct MHD_Connection *connection, unsigned status, const char *content_type,
                          const char *allow, const char *headers, const void *body, size_t length);

#endif
