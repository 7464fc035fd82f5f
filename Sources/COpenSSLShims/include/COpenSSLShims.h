// Functions for the OpenSSL macros that Swift cannot import, so the Swift code
// reaches OpenSSL through plain C functions only.
#ifndef FAKEAPNS_COPENSSLSHIMS_H
#define FAKEAPNS_COPENSSLSHIMS_H

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdint.h>
#include <stddef.h>

/// OpenSSL's read buffer per busy connection, with read-ahead: up to four full records
/// from one read of the socket.
#define FAKEAPNS_TLS_READ_BUFFER (64 * 1024)

/// Server defaults: TLS 1.0 and later (legacy APNs clients), no renegotiation,
/// a peer closing without close_notify is an ordinary end of stream; read-ahead into a
/// buffer of FAKEAPNS_TLS_READ_BUFFER bytes, kept while the connection is busy.
int fakeapns_ssl_ctx_configure(SSL_CTX *ctx, int allow_legacy_versions);

/// Partial writes and moving write buffers, as the connection loop expects.
void fakeapns_ssl_set_modes(SSL *ssl);

/// Client side: server name indication.
int fakeapns_ssl_set_host_name(SSL *ssl, const char *name);

/// Bytes held by a memory BIO, without copying.
long fakeapns_bio_mem_data(BIO *bio, char **data);

/// The first value of the subject's UID attribute (where APNs provider
/// certificates carry their topic), copied as UTF-8 into `buffer`; returns its
/// length, or -1 when there is none or it does not fit.
int fakeapns_x509_subject_uid(X509 *cert, char *buffer, int capacity);

/// The subject in RFC 2253 form, copied into `buffer`; returns its length or -1.
int fakeapns_x509_subject_rfc2253(X509 *cert, char *buffer, int capacity);

/// The last verification error string of a handshake, or NULL.
const char *fakeapns_ssl_verify_error(SSL *ssl);

/// Pops every queued OpenSSL error into `buffer` as one line; returns its length.
int fakeapns_drain_errors(char *buffer, int capacity);

/// Makes a server context one for HTTP/2 over TLS (RFC 9113 §9.2): TLS 1.2 or later, and
/// under TLS 1.2 only ECDHE or DHE with AES-GCM or ChaCha20-Poly1305, so a client that offers
/// less is refused in the handshake. Selects ALPN "h2": a client that offers h2 gets it; one
/// that offers nothing (HTTP/2 with prior knowledge) or something else is served without ALPN.
/// Returns 1, or 0 with the reason on OpenSSL's error queue.
int fakeapns_ssl_ctx_configure_h2(SSL_CTX *ctx);

/// Asks for ALPN "h2" on a client connection.
int fakeapns_ssl_request_h2(SSL *ssl);

/// The value of extension `oid` (dotted text) in `cert`: the content of its OCTET STRING,
/// copied into `buffer`; returns its length, 0 when absent, -1 when it does not fit.
int fakeapns_x509_extension_value(X509 *cert, const char *oid, unsigned char *buffer, int capacity);

/// Makes a peer that closes without close_notify an error on this connection again
/// (SSL_OP_IGNORE_UNEXPECTED_EOF off), so a client can tell a clean end from an abrupt one.
void fakeapns_ssl_require_close_notify(SSL *ssl);

#endif
