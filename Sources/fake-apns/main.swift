import FakeAPNs
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// The daemon: parse options, start the server, print a start line and one JSON line per
// accepted notification, stop cleanly on SIGINT or SIGTERM.

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("fake-apns: \(message)\n".utf8))
    exit(status)
}

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail(error.description, status: 64)
}
if options.showHelp {
    print(Options.help)
    exit(0)
}
if options.showVersion {
    print("fake-apns \(Options.version)")
    exit(0)
}

// Block the stop signals in every thread; the main thread takes them with sigwait.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGINT)
sigaddset(&stopSignals, SIGTERM)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

let server: FakeAPNsServer
do {
    var configuration = FakeAPNsServer.Configuration(
        host: options.host, gatewayPort: options.gatewayPort, maximumPayloadSize: options.maximumPayloadSize)
    if let certificate = options.certificateFile, let key = options.keyFile {
        configuration.identity = try TLSIdentity(
            certificateFile: certificate, privateKeyFile: key, passphrase: options.keyPassphrase)
    }
    if options.clientCertificates != .off {
        let trusted = try options.trustedCAFile.map { try String(contentsOfFile: $0, encoding: .utf8) }
        configuration.clientCertificates = ClientCertificatePolicy(
            mode: options.clientCertificates, trustedCAsPEM: trusted ?? TestCertificates.caPEM)
    }
    server = try FakeAPNsServer.started(configuration: configuration)
} catch {
    fail("\(error)", status: 1)
}

let output = OutputWriter()
output.writeLine(JSONValue.object([
    "event": "listening",
    "version": .string(Options.version),
    "listeners": [
        ["name": "gateway", "host": .string(options.host), "port": .int(server.gatewayPort)],
    ],
]).serialized())

let printed = DispatchSemaphore(value: 0)
let printer = Thread {
    while true {
        guard let batch = try? server.notifications.popAll(timeout: .milliseconds(100)) else {
            if output.isClosing { break }
            continue
        }
        output.write(batch.map { #"{"event":"notification","# + $0.jsonObject.serialized().dropFirst() })
    }
    printed.signal()
}
printer.start()

var received: Int32 = 0
sigwait(&stopSignals, &received)
// Stop accepting, let the printer write what arrived before the stop, then leave.
server.stop()
output.close()
_ = printed.wait(timeout: .now() + .milliseconds(800))
exit(0)
