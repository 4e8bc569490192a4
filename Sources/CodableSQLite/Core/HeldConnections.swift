#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The connections the current thread holds, most recent last.
///
/// A call made on a database while the same thread already holds one of its connections (inside
/// `inTransaction(_:)`, or while decoding rows) runs inline on that connection
/// instead of waiting for a lock the thread itself holds. Thread-local rather than task-local on
/// purpose: a task started inside a transaction runs on another thread and must wait for the
/// transaction like any other caller.
final class HeldConnections {
    private struct Entry {
        let database: ObjectIdentifier
        let connection: Unmanaged<RawConnection>
    }

    /// Only the owning thread touches it.
    private let entries = UncheckedState<[Entry]>([])

    /// The calling thread's list, created on first use and released when the thread exits.
    static var current: HeldConnections {
        if let pointer = pthread_getspecific(threadKey) {
            return Unmanaged<HeldConnections>.fromOpaque(pointer).takeUnretainedValue()
        }
        let held = HeldConnections()
        pthread_setspecific(threadKey, Unmanaged.passRetained(held).toOpaque())
        return held
    }

    /// The connection of `database` this thread holds, innermost first.
    func connection(of database: ObjectIdentifier) -> RawConnection? {
        for entry in entries.pointee.reversed() where entry.database == database {
            return entry.connection.takeUnretainedValue()
        }
        return nil
    }

    func push(_ connection: RawConnection, of database: ObjectIdentifier) {
        entries.pointee.append(Entry(database: database, connection: .passUnretained(connection)))
    }

    func pop() {
        entries.pointee.removeLast()
    }
}

#if canImport(Darwin)
private let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { pointer in
        Unmanaged<HeldConnections>.fromOpaque(pointer).release()
    }
    return key
}()
#else
private let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { pointer in
        if let pointer { Unmanaged<HeldConnections>.fromOpaque(pointer).release() }
    }
    return key
}()
#endif
