#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// A blocking TLS client connection, for the project's own clients of the protocols (tests,
/// the daemon's client commands). Reads and writes give up after `readTimeout`, so a client
/// never hangs on a server that stopped reading.
final class TLSClient: @unchecked Sendable {
    let stream: TLSStream

    /// Connects and completes the handshake.
    ///
    /// - Parameters:
    ///   - trustedCAsPEM: CAs the server's certificate must chain to (nil: accept any).
    ///   - identity: a client certificate to present.
    init(
        host: String, port: Int, trustedCAsPEM: String? = TestCertificates.caPEM, identity: TLSIdentity? = nil,
        readTimeout: Duration = .seconds(10), offerHTTP2: Bool = false
    ) throws {
        let context = try TLSContext.client(trustedCAsPEM: trustedCAsPEM, identity: identity)
        let socket = try Socket.connect(host: host, port: port)
        Socket.setTimeout(socket, SO_RCVTIMEO, readTimeout)
        Socket.setTimeout(socket, SO_SNDTIMEO, readTimeout)
        do {
            stream = try TLSStream(connectedSocket: socket, context: context, serverName: host)
            if offerHTTP2 { stream.requestHTTP2() }
        } catch {
            Glibc.close(socket)
            throw error
        }
        try stream.handshake()
    }

    /// Sends all of `bytes`.
    func send(_ bytes: [UInt8]) throws {
        try stream.write(bytes)
    }

    /// Reads until the server closes the connection (or the read timeout passes) and returns
    /// everything it sent.
    func readToEnd() throws -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try stream.read(into: $0) }
            if count == 0 { return result }
            result += chunk[0..<count]
        }
    }

    /// Closes the write side (close_notify, unless it went out already) and the connection.
    func close() {
        stream.close()
    }
}
