// nghttp2 calls whose names or types changed across releases (1.52 in Debian 12 lacks the
// `*2` API that newer releases prefer), behind one stable set of functions.
#ifndef FAKEAPNS_HTTP2_H
#define FAKEAPNS_HTTP2_H

#include <nghttp2/nghttp2.h>
#include <stddef.h>
#include <stdint.h>

/// Bytes nghttp2 wants to send next (0: nothing); negative: an nghttp2 error code.
long fakeapns_h2_mem_send(nghttp2_session *session, const uint8_t **data);

/// Feeds received bytes; returns how many were processed or a negative nghttp2 error code.
long fakeapns_h2_mem_recv(nghttp2_session *session, const uint8_t *in, size_t length);

/// Submits a response: headers, then `body` (copied) as DATA with END_STREAM; with no body
/// the HEADERS frame ends the stream.
int fakeapns_h2_submit_response(nghttp2_session *session, int32_t stream_id, const nghttp2_nv *nva,
                                size_t nvlen, const uint8_t *body, size_t body_length);

/// Submits a request with an optional body (copied); returns the stream id or a negative error.
int32_t fakeapns_h2_submit_request(nghttp2_session *session, const nghttp2_nv *nva, size_t nvlen,
                                   const uint8_t *body, size_t body_length);

/// Frees a body not yet fully sent when its stream closes.
void fakeapns_h2_release_stream_body(nghttp2_session *session, int32_t stream_id);

#endif
