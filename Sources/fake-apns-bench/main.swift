import FakeAPNs
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// fake-apns-bench: the in-process side of `Scripts/bench.sh`. Each mode prints one JSON line
/// last on standard output and exits 0, or exits 1 with a message on standard error.
///
/// - Ingest (the default, or `--http2`): starts a `FakeAPNsServer` (binary gateway, or the
///   HTTP/2 provider API; built-in test identity), prints the bound port on the first line,
///   then pops notifications from the library's queue in batches (so memory stays flat) until
///   `--count` have been decoded and queued. Every popped binary notification is checked:
///   with one connection identifiers must run 1, 2, 3, ... in order; with `--connections N`
///   each connection's identifiers must run on by one from its first, every identifier
///   1...count must arrive exactly once, over exactly N connections.
/// - `--latency`: send-to-pop round trips, one notification at a time, over the binary gateway
///   and the HTTP/2 provider API, next to a bare TLS ping-pong of the same frame.
/// - `--start`: from starting a `FakeAPNsServer` to the first notification popped, next to
///   setting up bare TLS on a fresh port and carrying the same frame once.
/// - `--memory`: prints the port, lets `--count` notifications be stored (never popped) and
///   reports the growth of its resident memory.
/// - `--device-model`: `--count` phones described offline with a push stored on each, then
///   the cost of a settings change, and of the clock advance that expires them all with the
///   answer time of a push sent meanwhile.

enum BenchMode { case ingest, latency, start, memory, deviceModel }

struct BenchOptions {
    var mode = BenchMode.ingest
    var host = "127.0.0.1"
    var port = 0
    var count: Int?
    var warmup: Int?
    var connections = 1
    var timeout = 120.0
    var checkIdentifiers = true
    var http2 = false
    /// With `http2`: the plaintext listener (cleartext HTTP/2), not the TLS one.
    var plaintext = false

    static let usage = """
        Usage: fake-apns-bench [--count N] [--connections N] [--port N] [--host HOST] [--timeout SECONDS]
                               [--no-check] [--http2 [--plaintext]]
               fake-apns-bench --latency [--count N] [--warmup N]
               fake-apns-bench --start [--count N] [--warmup N]
               fake-apns-bench --memory [--count N] [--timeout SECONDS]
               fake-apns-bench --device-model [--count N]

          --count N           Ingest: notifications to wait for (default 1000000). Latency: round
                              trips of each kind (default 20000). Start: starts of each kind
                              (default 50). Memory: notifications to store (default 100000).
                              Device model: phones described (default 1000).
          --connections N     Ingest: the notifications come over N connections (default 1).
          --warmup N          Latency, start: untimed rounds first (default 2000, 3).
          --port N            Listening port (default 0: a free one, printed on the first line).
          --host HOST         Address to bind (default 127.0.0.1).
          --timeout SECONDS   Give up, exiting 1, after this long (default 120).
          --no-check          Do not check the identifiers.
          --http2             Listen with the HTTP/2 provider API instead of the binary gateway
                              (implies --no-check: HTTP/2 has no binary identifiers).
          --plaintext         With --http2: the plaintext listener (h2c, HTTP/1.1) instead.
          --latency, --start, --memory, --device-model   The modes above.
        """

    static func parse(_ arguments: [String]) -> BenchOptions {
        var options = BenchOptions()
        var rest = arguments[...]
        func fail(_ message: String) -> Never {
            FileHandle.standardError.write(Data("fake-apns-bench: \(message)\n\(usage)\n".utf8))
            exit(64)
        }
        func value(_ name: String) -> String {
            guard let next = rest.popFirst() else { fail("\(name) needs a value") }
            return next
        }
        func positive(_ name: String) -> Int {
            guard let number = Int(value(name)), number > 0 else { fail("\(name) takes a positive integer") }
            return number
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--count":
                options.count = positive(argument)
            case "--warmup":
                guard let number = Int(value(argument)), number >= 0 else { fail("--warmup takes an integer >= 0") }
                options.warmup = number
            case "--connections":
                options.connections = positive(argument)
            case "--port":
                guard let number = Int(value(argument)), (0...65535).contains(number) else {
                    fail("--port takes a port from 0 to 65535")
                }
                options.port = number
            case "--host":
                options.host = value(argument)
            case "--timeout":
                guard let seconds = Double(value(argument)), seconds > 0 else {
                    fail("--timeout takes a positive number of seconds")
                }
                options.timeout = seconds
            case "--no-check":
                options.checkIdentifiers = false
            case "--http2":
                options.http2 = true
                options.checkIdentifiers = false
            case "--plaintext":
                options.plaintext = true
            case "--latency":
                options.mode = .latency
            case "--start":
                options.mode = .start
            case "--memory":
                options.mode = .memory
            case "--device-model":
                options.mode = .deviceModel
            case "--help", "-h":
                writeLine(usage)
                exit(0)
            default:
                fail("unknown argument '\(argument)'")
            }
        }
        return options
    }
}

let options = BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
switch options.mode {
case .ingest: runIngest(options)
case .latency: runLatency(options)
case .start: runStart(options)
case .memory: runMemory(options)
case .deviceModel: runDeviceModel(options)
}
exit(0)
