import COpenSSL
import FakeAPNs
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Bare TLS over loopback, straight on OpenSSL with its defaults and blocking sockets with
/// TCP_NODELAY, as FakeAPNs's own connections are: the references the latency and start-up
/// figures are measured against. Nothing of FakeAPNs is on this path but the test identity
/// (`TestCertificates`), so the same certificate, TLS version and cipher suite are used.
enum BareTLS {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// A failure, with OpenSSL's first queued error when there is one.
    static func failure(_ what: String) -> Failure {
        var text = what
        let code = ERR_get_error()
        if code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            text += ": " + String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        } else if errno != 0 {
            text += ": " + String(cString: strerror(errno))
        }
        ERR_clear_error()
        return Failure(description: text)
    }

    /// A server context presenting the built-in test identity.
    static func serverContext() throws -> Context {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw failure("creating a server context") }
        let result = Context(context)
        try withBIO(TestCertificates.serverCertificatePEM) { bio in
            guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else { throw failure("reading the certificate") }
            defer { X509_free(certificate) }
            guard SSL_CTX_use_certificate(context, certificate) == 1 else { throw failure("using the certificate") }
        }
        try withBIO(TestCertificates.serverKeyPEM) { bio in
            guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { throw failure("reading the key") }
            defer { EVP_PKEY_free(key) }
            guard SSL_CTX_use_PrivateKey(context, key) == 1 else { throw failure("using the key") }
        }
        return result
    }

    /// A client context trusting the test CA and verifying the server's certificate, as
    /// `BinaryProviderClient` does by default.
    static func clientContext() throws -> Context {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw failure("creating a client context") }
        let result = Context(context)
        try withBIO(TestCertificates.caPEM) { bio in
            guard let ca = PEM_read_bio_X509(bio, nil, nil, nil) else { throw failure("reading the CA") }
            defer { X509_free(ca) }
            guard X509_STORE_add_cert(SSL_CTX_get_cert_store(context), ca) == 1 else { throw failure("trusting the CA") }
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        return result
    }

    private static func withBIO(_ text: String, _ body: (OpaquePointer) throws -> Void) throws {
        var bytes = Array(text.utf8)
        try bytes.withUnsafeMutableBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { throw failure("BIO_new_mem_buf") }
            defer { BIO_free(bio) }
            try body(bio)
        }
    }

    /// An SSL_CTX, freed with its owner.
    final class Context: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { SSL_CTX_free(pointer) }
    }

    /// A listening socket on 127.0.0.1 and a free port.
    final class Listener: @unchecked Sendable {
        let fd: Int32
        let port: Int

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw failure("socket") }
            var address = BareTLS.loopback(port: 0)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0, listen(fd, 16) == 0 else {
                let error = failure("bind/listen")
                Glibc.close(fd)
                throw error
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            self.fd = fd
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        /// Accepts one connection and completes the server side of its handshake.
        func accept(context: Context) throws -> Connection {
            let client = Glibc.accept(fd, nil, nil)
            guard client >= 0 else { throw failure("accept") }
            BareTLS.setNoDelay(client)
            let connection = try Connection(fd: client, context: context, server: true)
            try connection.handshake()
            return connection
        }

        func close() {
            Glibc.shutdown(fd, Int32(SHUT_RDWR))
            Glibc.close(fd)
        }
    }

    /// A TLS connection over a blocking socket, used by one thread at a time.
    final class Connection: @unchecked Sendable {
        let fd: Int32
        private let ssl: OpaquePointer
        private var closed = false

        fileprivate init(fd: Int32, context: Context, server: Bool) throws {
            guard let ssl = SSL_new(context.pointer) else {
                Glibc.close(fd)
                throw failure("SSL_new")
            }
            self.fd = fd
            self.ssl = ssl
            SSL_set_fd(ssl, fd)
            if server { SSL_set_accept_state(ssl) } else { SSL_set_connect_state(ssl) }
        }

        /// Connects to 127.0.0.1:port and completes the client side of the handshake.
        static func connect(port: Int, context: Context) throws -> Connection {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw failure("socket") }
            var address = BareTLS.loopback(port: port)
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard result == 0 else {
                let error = failure("connect")
                Glibc.close(fd)
                throw error
            }
            BareTLS.setNoDelay(fd)
            let connection = try Connection(fd: fd, context: context, server: false)
            try connection.handshake()
            return connection
        }

        deinit {
            close()
            SSL_free(ssl)
        }

        func handshake() throws {
            guard SSL_do_handshake(ssl) == 1 else { throw failure("TLS handshake") }
        }

        /// Reads exactly `buffer.count` bytes; false when the peer closed first.
        func readExactly(into buffer: UnsafeMutableRawBufferPointer) throws -> Bool {
            var offset = 0
            while offset < buffer.count {
                let result = SSL_read(ssl, buffer.baseAddress! + offset, Int32(buffer.count - offset))
                if result <= 0 {
                    let error = SSL_get_error(ssl, result)
                    if error == SSL_ERROR_ZERO_RETURN || (error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
                        return false
                    }
                    throw failure("SSL_read (error \(error))")
                }
                offset += Int(result)
            }
            return true
        }

        func write(_ bytes: UnsafeRawBufferPointer) throws {
            var offset = 0
            while offset < bytes.count {
                let result = SSL_write(ssl, bytes.baseAddress! + offset, Int32(bytes.count - offset))
                guard result > 0 else { throw failure("SSL_write") }
                offset += Int(result)
            }
        }

        /// The negotiated TLS version and cipher suite, e.g. "TLSv1.3 TLS_AES_256_GCM_SHA384".
        var negotiated: String {
            let cipher = SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map { String(cString: $0) }
            return String(cString: SSL_get_version(ssl)) + " " + (cipher ?? "?")
        }

        func close() {
            guard !closed else { return }
            closed = true
            if SSL_is_init_finished(ssl) == 1 { _ = SSL_shutdown(ssl) }
            Glibc.close(fd)
        }
    }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }
}

/// A one-shot signal between two threads.
final class Signal: @unchecked Sendable {
    private let condition = ConditionLock()
    // Protected by `condition`:
    private var raised = false
    private var failure: (any Error)?

    func raise(_ error: (any Error)? = nil) {
        condition.withLock {
            raised = true
            failure = error
            condition.broadcast()
        }
    }

    /// Waits for `raise`, rethrowing the error it was raised with; false after `seconds`.
    func wait(seconds: Double) throws -> Bool {
        let deadline = Deadline.after(.seconds(seconds))
        return try condition.withLock {
            while !raised {
                if !condition.wait(until: deadline) { return raised }
            }
            if let failure { throw failure }
            return true
        }
    }
}
