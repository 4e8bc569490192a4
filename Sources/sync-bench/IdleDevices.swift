// Scenario 6 of sync-bench: idle live devices, each an open event stream (GET /sync/events) on a
// raw socket of this process (a file descriptor each, so that the memory measured is the
// server's), then one account's commit: how long until its stream hears it, and how many other
// streams were told anything.
#if Server
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The resident memory of this process, in bytes (Linux: /proc/self/statm; elsewhere 0).
func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// One idle device's event stream, on a blocking socket.
final class IdleStream: @unchecked Sendable {  // its descriptor is used by one thread at a time
    let descriptor: Int32

    /// Opens `GET /sync/events?after=VERSION` with `token` and reads until the server says it
    /// listens.
    init(port: Int, token: String, after version: Int64) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw Failure(description: "connect() failed: errno \(errno)")
        }
        let request = "GET /sync/events?after=\(version) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nAccept: text/event-stream\r\n\r\n"
        _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
        guard try read(until: "listening") else { throw Failure(description: "an event stream did not open") }
    }

    deinit { close(descriptor) }

    /// Reads until `marker` has come (`true`), or the server closed (`false`).
    func read(until marker: String) throws -> Bool {
        var received = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.contains(marker) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { return false }
            received += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        return true
    }

    /// What has arrived, without waiting for more.
    func drain() -> String {
        var received = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 0) > 0 else { return received }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { return received }
            received += String(decoding: buffer[0..<count], as: UTF8.self)
        }
    }
}

/// Runs `body` on a thread of its own (blocking socket calls stay off the cooperative pool, which
/// serves the server's handlers).
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// As many descriptors as the system allows this process (two per idle device: its socket and
/// the server's).
func raiseDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}
#endif
