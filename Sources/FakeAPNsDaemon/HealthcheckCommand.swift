import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `fake-apns healthcheck [options]`: asks the control API's `/healthz` of a daemon on this
/// machine and exits 0 when it answers 200, 1 otherwise. It reads the serve options (command
/// line and `FAKE_APNS_*` variables) for the control API's address and port, so in a container
/// image without a shell it is the health check, with the image's own environment.
enum HealthcheckCommand {
    static func run(_ arguments: [String], environment: [String: String]) -> Int32 {
        let options: Options
        do {
            options = try Options.parse(arguments, environment: environment)
        } catch {
            return FakeAPNsCommand.usageError("\(error)")
        }
        if options.showHelp {
            print("Usage: fake-apns healthcheck [serve options]\n\nExits 0 when the control API at --web-host (any address: loopback) and --web-port answers GET /healthz with 200, 1 otherwise (3 s at most).")
            return 0
        }
        // An address for every interface is reached on loopback.
        let host: String
        switch options.webHost {
        case "0.0.0.0", "localhost": host = "127.0.0.1"
        case "::", "[::]": host = "::1"
        default: host = options.webHost.trimming { $0 == "[" || $0 == "]" }
        }
        if let status = statusLine(host: host, port: options.webPort), status.hasPrefix("HTTP/1.") && status.contains(" 200 ") {
            return 0
        }
        FakeAPNsCommand.printError("healthcheck: http://\(host):\(options.webPort)/healthz did not answer 200")
        return 1
    }

    /// The first line of the answer to `GET /healthz`, or nil when there is none within 3 s.
    private static func statusLine(host: String, port: Int) -> String? {
        guard let fd = try? Socket.connect(host: host, port: port) else { return nil }
        defer { close(fd) }
        Socket.setTimeout(fd, SO_RCVTIMEO, .seconds(3))
        Socket.setTimeout(fd, SO_SNDTIMEO, .seconds(3))
        let request = Array("GET /healthz HTTP/1.0\r\nHost: \(host)\r\n\r\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return nil }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while !answer.contains(UInt8(ascii: "\n")) && answer.count < 4096 {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            answer += buffer[..<count]
        }
        return String(decoding: answer.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }
}
