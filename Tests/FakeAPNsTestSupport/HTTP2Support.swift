import Foundation
@testable import FakeAPNs

extension FakeAPNsServer {
    /// An HTTP/2 client connected to this server's provider API.
    package func connectHTTP2(identity: TLSIdentity? = nil, offerALPN: Bool = true) throws -> ProviderAPIClient {
        try ProviderAPIClient(host: configuration.host, port: http2Port!, identity: identity, offerALPN: offerALPN)
    }
}

extension ProviderAPIClient.Request {
    /// A push to `token` with the usual headers; `extra` are appended as given.
    package static func push(
        _ token: DeviceToken = Fixtures.token, topic: String? = "com.example.app", pushType: String? = "alert",
        extra: [(String, String)] = [], body: [UInt8] = Fixtures.alert
    ) -> ProviderAPIClient.Request {
        var headers: [(String, String)] = []
        if let topic { headers.append(("apns-topic", topic)) }
        if let pushType { headers.append(("apns-push-type", pushType)) }
        return ProviderAPIClient.Request(path: "/3/device/\(token.hex)", headers: headers + extra, body: body)
    }
}

/// An HTTP/2 connection taken past the preface and the SETTINGS exchange, and then left to
/// the test: for what the server does with a connection that sends nothing more, or a part of
/// a frame. The client session records a GOAWAY.
package final class IdleHTTP2Connection {
    package let tls: TLSClient
    private let session: NGHTTP2Session
    private let recorder = GoAwayRecorder()

    /// GOAWAY's debug data, once the server sent one and ``readToEnd()`` read it.
    package var goAwayDebugData: [UInt8]? { recorder.goAwayDebugData }

    package init(port: Int, host: String = "127.0.0.1", timeout: Duration = .seconds(15)) throws {
        tls = try TLSClient(host: host, port: port, readTimeout: timeout, offerHTTP2: true)
        session = try NGHTTP2Session(server: false, delegate: recorder)
        session.submitSettings([])
        try tls.send(try session.takeOutput())
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = try buffer.withUnsafeMutableBytes { try tls.stream.read(into: $0) }
        try buffer.withUnsafeBytes { try session.receive(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        try tls.send(try session.takeOutput())
    }

    /// Reads and processes what the server sends until it closes the connection.
    package func readToEnd() throws {
        let bytes = try tls.readToEnd()
        try bytes.withUnsafeBytes { try session.receive($0) }
    }

    package func close() {
        tls.close()
    }

    private final class GoAwayRecorder: HTTP2SessionDelegate {
        var goAwayDebugData: [UInt8]?

        func streamBegan(_ stream: Int32) {}
        func header(_ stream: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {}
        func data(_ stream: Int32, _ bytes: UnsafeRawBufferPointer) {}
        func streamEnded(_ stream: Int32) {}
        func streamClosed(_ stream: Int32, errorCode: UInt32) {}
        func goAwayReceived(lastStream: Int32, errorCode: UInt32, debugData: [UInt8]) { goAwayDebugData = debugData }
    }
}
