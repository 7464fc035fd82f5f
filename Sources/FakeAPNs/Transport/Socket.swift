#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// A failure of a socket call, with the system's words.
public struct SocketError: Error, Sendable, CustomStringConvertible {
    /// What was being done ("binding 127.0.0.1:2195").
    public let operation: String
    /// The errno value, or 0 for a resolver failure.
    public let code: Int32
    /// The system's message.
    public let message: String

    init(_ operation: String, code: Int32 = errno) {
        self.operation = operation
        self.code = code
        self.message = String(cString: strerror(code))
    }

    init(_ operation: String, message: String) {
        self.operation = operation
        self.code = 0
        self.message = message
    }

    public var description: String { "\(operation): \(message)" }
}

/// Plain socket calls, in one place (the daemon's health check connects with them too).
package enum Socket {
    /// Ignore SIGPIPE once per process, so writing to a peer that left is an error, not death.
    static let ignoreBrokenPipe: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    /// Resolves `host` (a name, an IPv4 or an IPv6 literal, with or without brackets).
    static func resolve(host: String, port: Int, passive: Bool) throws -> [(family: Int32, address: [UInt8])] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let status = getaddrinfo(bare.isEmpty ? nil : bare, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw SocketError("resolving \(host)", message: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(first) }
        var results: [(Int32, [UInt8])] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            let bytes = UnsafeRawBufferPointer(start: current.pointee.ai_addr, count: Int(current.pointee.ai_addrlen))
            results.append((current.pointee.ai_family, Array(bytes)))
            entry = current.pointee.ai_next
        }
        return results
    }

    /// A listening socket on `host:port` (port 0: the system picks), and the port it got.
    package static func listen(host: String, port: Int, backlog: Int32 = 1024) throws -> (socket: Int32, port: Int) {
        _ = ignoreBrokenPipe
        guard (0...65535).contains(port) else {
            throw SocketError("binding \(host):\(port)", message: "port out of range")
        }
        var lastError = SocketError("binding \(host):\(port)", message: "no address")
        for (family, address) in try resolve(host: host, port: port, passive: true) {
            let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { lastError = SocketError("creating a socket"); continue }
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            let bound = address.withUnsafeBytes {
                bind(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
            }
            guard bound == 0 else {
                lastError = SocketError("binding \(host):\(port)")
                close(fd)
                continue
            }
            guard Glibc.listen(fd, backlog) == 0 else {
                lastError = SocketError("listening on \(host):\(port)")
                close(fd)
                continue
            }
            return (fd, try localPort(of: fd))
        }
        throw lastError
    }

    /// A connected socket to `host:port`.
    package static func connect(host: String, port: Int) throws -> Int32 {
        _ = ignoreBrokenPipe
        var lastError = SocketError("connecting to \(host):\(port)", message: "no address")
        for (family, address) in try resolve(host: host, port: port, passive: false) {
            let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { lastError = SocketError("creating a socket"); continue }
            let result = address.withUnsafeBytes {
                Glibc.connect(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
            }
            if result == 0 {
                setNoDelay(fd)
                return fd
            }
            lastError = SocketError("connecting to \(host):\(port)")
            close(fd)
        }
        throw lastError
    }

    /// Makes calls on `fd` that would wait fail with EAGAIN instead.
    static func setNonBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    /// Runs `body` with `fd` non-blocking, then puts its flags back.
    static func withNonBlocking<T>(_ fd: Int32, _ body: () throws -> T) rethrows -> T {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(fd, F_SETFL, flags) }
        return try body()
    }

    /// Turns off Nagle's algorithm: small error responses and answers leave at once.
    static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Sets `SO_RCVTIMEO` or `SO_SNDTIMEO`: a blocking receive or send that waits that long
    /// fails with `EAGAIN`.
    package static func setTimeout(_ fd: Int32, _ option: Int32, _ timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The local port a socket is bound to.
    static func localPort(of fd: Int32) throws -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw SocketError("reading the bound port") }
        return port(of: storage)
    }

    /// "host:port" of the peer, for logs and connection records.
    static func peerAddress(of fd: Int32) -> String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard result == 0 else { return "unknown" }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let status = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
            }
        }
        let name = status == 0 ? String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
        let port = port(of: storage)
        return storage.ss_family == sa_family_t(AF_INET6) ? "[\(name)]:\(port)" : "\(name):\(port)"
    }

    private static func port(of storage: sockaddr_storage) -> Int {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            if storage.ss_family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }
}
