import Foundation
@testable import FakeAPNs

extension FakeAPNsServer {
    /// An HTTP/2 client connected to this server's provider API.
    func connectHTTP2(identity: TLSIdentity? = nil, offerALPN: Bool = true) throws -> ProviderAPIClient {
        try ProviderAPIClient(host: configuration.host, port: http2Port!, identity: identity, offerALPN: offerALPN)
    }
}

extension ProviderAPIClient.Request {
    /// A push to `token` with the usual headers; `extra` are appended as given.
    static func push(
        _ token: DeviceToken = Fixtures.token, topic: String? = "com.example.app", pushType: String? = "alert",
        extra: [(String, String)] = [], body: [UInt8] = Fixtures.alert
    ) -> ProviderAPIClient.Request {
        var headers: [(String, String)] = []
        if let topic { headers.append(("apns-topic", topic)) }
        if let pushType { headers.append(("apns-push-type", pushType)) }
        return ProviderAPIClient.Request(path: "/3/device/\(token.hex)", headers: headers + extra, body: body)
    }
}

/// The repository's root, for files in TestCerts/.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

/// Runs a command-line tool to its end; its exit status, standard output and standard error.
func runTool(_ tool: String, _ arguments: [String], timeout: Duration = .seconds(60)) throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read both pipes while the tool runs, so a chatty tool never blocks on a full pipe.
    let outputData = Mailbox<Data>(noun: "output")
    let errorData = Mailbox<Data>(noun: "output")
    Thread { outputData.append(output.fileHandleForReading.readDataToEndOfFile()) }.start()
    Thread { errorData.append(error.fileHandleForReading.readDataToEndOfFile()) }.start()
    let out = try outputData.pop(timeout: timeout)
    let err = try errorData.pop(timeout: timeout)
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
}

/// An HTTP/2 connection taken past the preface and the SETTINGS exchange, and then left to
/// the test: for what the server does with a connection that sends nothing more, or a part of
/// a frame. The client session records a GOAWAY.
final class IdleHTTP2Connection {
    let tls: TLSClient
    let session: NGHTTP2Session
    private let recorder = GoAwayRecorder()

    /// GOAWAY's debug data, once the server sent one and ``readToEnd()`` read it.
    var goAwayDebugData: [UInt8]? { recorder.goAwayDebugData }

    init(port: Int, host: String = "127.0.0.1", timeout: Duration = .seconds(15)) throws {
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
    func readToEnd() throws {
        let bytes = try tls.readToEnd()
        try bytes.withUnsafeBytes { try session.receive($0) }
    }

    func close() {
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
