// GnuTLS, absent, for the release daemon's static libmicrohttpd (see Scripts/build-daemon).
//
// Debian builds libmicrohttpd with HTTPS support, so its shared library links GnuTLS and, through
// it, nettle, hogweed, gmp, p11-kit, libtasn1, libidn2, libunistring and libffi: 6.7 MB, which
// would make the 26.5 MB container image 33 MB. The daemon serves its control API as plain HTTP
// only (it never starts libmicrohttpd with MHD_USE_TLS), so the release build links libmicrohttpd's
// static archive with these definitions in place of GnuTLS's. Starting and stopping the library
// initialises nothing; every other function belongs to a TLS connection and stops the process,
// which would be a bug in the daemon, not a client's doing. The debug build links the shared
// libmicrohttpd and GnuTLS, and never this file.
#include <stdlib.h>

int gnutls_global_init(void) {
    return 0;
}

void gnutls_global_deinit(void) {
}

void *(*gnutls_malloc)(size_t) = malloc;

#define WITHOUT_TLS(name)                                                                                          \
    void name(void) {                                                                                              \
        abort();                                                                                                   \
    }

WITHOUT_TLS(gnutls_alpn_set_protocols)
WITHOUT_TLS(gnutls_bye)
WITHOUT_TLS(gnutls_certificate_allocate_credentials)
WITHOUT_TLS(gnutls_certificate_free_credentials)
WITHOUT_TLS(gnutls_certificate_server_set_request)
WITHOUT_TLS(gnutls_certificate_set_dh_params)
WITHOUT_TLS(gnutls_certificate_set_retrieve_function2)
WITHOUT_TLS(gnutls_certificate_set_retrieve_function3)
WITHOUT_TLS(gnutls_certificate_set_x509_key_mem)
WITHOUT_TLS(gnutls_certificate_set_x509_key_mem2)
WITHOUT_TLS(gnutls_certificate_set_x509_trust_mem)
WITHOUT_TLS(gnutls_cipher_get)
WITHOUT_TLS(gnutls_credentials_set)
WITHOUT_TLS(gnutls_deinit)
WITHOUT_TLS(gnutls_dh_params_deinit)
WITHOUT_TLS(gnutls_dh_params_import_pkcs3)
WITHOUT_TLS(gnutls_dh_params_init)
WITHOUT_TLS(gnutls_handshake)
WITHOUT_TLS(gnutls_init)
WITHOUT_TLS(gnutls_priority_deinit)
WITHOUT_TLS(gnutls_priority_init)
WITHOUT_TLS(gnutls_priority_set)
WITHOUT_TLS(gnutls_protocol_get_version)
WITHOUT_TLS(gnutls_psk_allocate_server_credentials)
WITHOUT_TLS(gnutls_psk_free_server_credentials)
WITHOUT_TLS(gnutls_psk_set_server_credentials_function)
WITHOUT_TLS(gnutls_record_check_pending)
WITHOUT_TLS(gnutls_record_get_direction)
WITHOUT_TLS(gnutls_record_recv)
WITHOUT_TLS(gnutls_record_send)
WITHOUT_TLS(gnutls_session_get_ptr)
WITHOUT_TLS(gnutls_session_set_ptr)
WITHOUT_TLS(gnutls_strerror)
WITHOUT_TLS(gnutls_transport_set_int2)
