// nghttp2 calls whose names or types changed across releases (1.52 in Debian 12 lacks the
// `*2` API that newer releases prefer), behind one stable set of functions.
#ifndef FAKEAPNS_CNGHTTP2SHIMS_H
#define FAKEAPNS_CNGHTTP2SHIMS_H

#include <nghttp2/nghttp2.h>
#include <stddef.h>
#include <stdint.h>

/// Creates a server or client session. A server's HPACK encoder uses no dynamic table: every
/// answer carries a fresh random `apns-id` (and `apns-unique-id`), which indexing would add to
/// the table only to evict older entries, never to be referenced again. That churn was about
/// half of what nghttp2 spent sending an answer. Header fields are then sent as literals
/// without indexing (`:status` still from the static table); what a client decodes is the
/// same.
int fakeapns_h2_session_new(nghttp2_session **session, const nghttp2_session_callbacks *callbacks,
                            void *user_data, int server);

/// Bytes nghttp2 wants to send next (0: nothing); negative: an nghttp2 error code.
long fakeapns_h2_mem_send(nghttp2_session *session, const uint8_t **data);

/// Feeds received bytes; returns how many were processed or a negative nghttp2 error code.
long fakeapns_h2_mem_recv(nghttp2_session *session, const uint8_t *in, size_t length);

/// Submits a response: headers, then `body` (copied) as DATA with END_STREAM; with no body
/// the HEADERS frame ends the stream.
int fakeapns_h2_submit_response(nghttp2_session *session, int32_t stream_id, const nghttp2_nv *nva,
                                size_t nvlen, const uint8_t *body, size_t body_length);

/// Submits the answer to an accepted notification, `:status: 200` and `apns-id`, plus
/// `apns-unique-id` when `unique_id` is not NULL; the HEADERS frame ends the stream. The
/// values are copied; the header names are static. Fields in that order, as a general
/// response with the same list would send them. With `index_names` the ids enter the HPACK
/// table (a connection's first answer), so that later answers, whose ids stay out of it,
/// name them by index.
int fakeapns_h2_submit_accepted(nghttp2_session *session, int32_t stream_id, const uint8_t *apns_id,
                                size_t apns_id_length, const uint8_t *unique_id, size_t unique_id_length,
                                int index_names);

/// Submits a request with an optional body (copied); returns the stream id or a negative error.
int32_t fakeapns_h2_submit_request(nghttp2_session *session, const nghttp2_nv *nva, size_t nvlen,
                                   const uint8_t *body, size_t body_length);

/// Frees a body not yet fully sent when its stream closes.
void fakeapns_h2_release_stream_body(nghttp2_session *session, int32_t stream_id);

#endif
