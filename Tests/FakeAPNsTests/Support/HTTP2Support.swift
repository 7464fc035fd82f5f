import Foundation
@testable import FakeAPNs

extension FakeAPNsServer {
    /// An HTTP/2 client connected to this server's provider API.
    func connectHTTP2(identity: TLSIdentity? = nil, offerALPN: Bool = true) throws -> HTTP2Client {
        try HTTP2Client(host: configuration.host, port: http2Port, identity: identity, offerALPN: offerALPN)
    }
}

extension HTTP2Client.Request {
    /// A push to `token` with the usual headers; `extra` are appended as given.
    static func push(
        _ token: DeviceToken = Fixtures.token, topic: String? = "com.example.app", pushType: String? = "alert",
        extra: [(String, String)] = [], body: [UInt8] = Fixtures.alert
    ) -> HTTP2Client.Request {
        var headers: [(String, String)] = []
        if let topic { headers.append(("apns-topic", topic)) }
        if let pushType { headers.append(("apns-push-type", pushType)) }
        return HTTP2Client.Request(path: "/3/device/\(token.hex)", headers: headers + extra, body: body)
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
