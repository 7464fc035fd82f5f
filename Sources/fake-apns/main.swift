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
    fail("\(error)", status: 64)
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

var devices: [DevicesFile.Entry] = []
if let path = options.devicesFile {
    do {
        devices = try DevicesFile.read(path)
    } catch {
        fail("\(error)", status: 64)
    }
}

let server: FakeAPNsServer
do {
    server = try Daemon.makeServer(options: options, devices: devices)
    try server.start()
} catch {
    fail("\(error)", status: 1)
}

let output = OutputWriter()
output.writeLine(JSONValue.object([
    "event": "listening",
    "version": .string(Options.version),
    "listeners": [
        ["name": "gateway", "host": .string(options.host), "port": .int(server.gatewayPort)],
        ["name": "feedback", "host": .string(options.host), "port": .int(server.feedbackPort)],
        ["name": "http2", "host": .string(options.host), "port": .int(server.http2Port)],
    ],
    "authentication": .string(Daemon.modeName(options)),
    "environment": .string(options.environment.rawValue),
]).serialized())

/// Prints every item of `queue` as a JSON line of kind `event` until the output closes.
func startPrinter<Item: Sendable>(
    _ queue: Mailbox<Item>, event: String, _ render: @escaping @Sendable (Item) -> JSONValue
) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let prefix = #"{"event":""# + event + #"","#
    Thread {
        while true {
            guard let batch = try? queue.popAll(timeout: .milliseconds(100)) else {
                if output.isClosing { break }
                continue
            }
            output.write(batch.map { prefix + render($0).serialized().dropFirst() })
        }
        done.signal()
    }.start()
    return done
}

let printers = [
    startPrinter(server.notifications, event: "notification") { $0.jsonObject },
    startPrinter(server.rejections, event: "rejected") { $0.jsonObject },
]

var received: Int32 = 0
sigwait(&stopSignals, &received)
// Stop accepting, let the printer write what arrived before the stop, then leave.
server.stop()
output.close()
for printer in printers {
    _ = printer.wait(timeout: .now() + .milliseconds(400))
}
exit(0)
