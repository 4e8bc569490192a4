import Foundation

/// A value behind a lock, for state shared by every thread (caches, registries).
///
/// Never hold it across I/O: the closures given to ``withLock(_:)`` only read or update memory.
package final class Locked<Value>: @unchecked Sendable {  // every access goes through `lock`
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
