import Dispatch
import Foundation

/// Connections handed to one user at a time: the writer (a pool of one) or the readers of a WAL
/// database (opened on demand up to a maximum).
///
/// Synchronous callers wait by blocking their own thread, as synchronous APIs must. `async`
/// callers never block a thread: when every connection is taken they *suspend*, and the caller
/// that releases a connection hands it straight to the first waiter, in arrival order, whichever
/// kind it is. A cancelled `async` waiter leaves the queue at once with `CancellationError`.
final class ConnectionPool: @unchecked Sendable {  // all mutable state is guarded by `lock`
    /// What a caller is given: a connection, or the right to open a new one (outside the lock,
    /// and for `async` callers on the connection's queue rather than the cooperative pool).
    enum Lease: Sendable {
        case connection(RawConnection)
        case newConnection
    }

    private final class BlockedWaiter {
        let semaphore = DispatchSemaphore(value: 0)
        var lease: Lease?
    }

    private enum Waiter {
        case blocked(BlockedWaiter)
        case suspended(id: UInt64, CheckedContinuation<Lease, any Error>)
    }

    /// Everything `lock` guards, in one value: each checkout and return is one access to it (a
    /// class's stored properties each cost a dynamic exclusivity check per access).
    private struct State {
        var available: [RawConnection]
        var openCount: Int
        var waiters: [Waiter] = []
        var nextWaiterID: UInt64 = 0
        let maximumCount: Int

        /// Takes a free connection, or the right to open one; `nil` when the caller must wait.
        mutating func take() -> Lease? {
            guard waiters.isEmpty else { return nil }  // first come, first served
            if let connection = available.popLast() { return .connection(connection) }
            if openCount < maximumCount {
                openCount += 1
                return .newConnection
            }
            return nil
        }

        /// Keeps `lease` when nobody waits; otherwise the first waiter, who gets it.
        mutating func giveBack(_ lease: Lease) -> Waiter? {
            guard !waiters.isEmpty else {
                switch lease {
                case .connection(let connection): available.append(connection)
                case .newConnection: openCount -= 1
                }
                return nil
            }
            return waiters.removeFirst()
        }
    }

    private let lock = NSLock()
    private var state: State
    private let openConnection: () throws -> RawConnection

    /// A pool that opens connections with `open`, up to `maximumCount`, starting with `initial`.
    init(maximumCount: Int, initial: [RawConnection] = [], open: @escaping () throws -> RawConnection) {
        state = State(available: initial, openCount: initial.count, maximumCount: max(1, maximumCount, initial.count))
        openConnection = open
    }

    // MARK: Taking

    /// A connection, waiting on this thread while every connection is taken.
    func acquire() throws -> RawConnection {
        lock.lock()
        if let lease = state.take() {
            lock.unlock()
            return try connection(for: lease)
        }
        let waiter = BlockedWaiter()
        state.waiters.append(.blocked(waiter))
        lock.unlock()
        waiter.semaphore.wait()
        guard let lease = waiter.lease else {
            throw SQLite.Error(code: .internal, message: "A connection was signalled without being handed over")
        }
        return try connection(for: lease)
    }

    /// A free connection now, or `nil` when every connection is taken or someone is waiting.
    func tryAcquire() -> RawConnection? {
        lock.withLock {
            guard state.waiters.isEmpty else { return nil }
            return state.available.popLast()
        }
    }

    /// A lease, suspending (without blocking a thread) while every connection is taken.
    /// Open a ``Lease/newConnection`` with ``connection(for:)`` off the cooperative pool.
    func lease() async throws -> Lease {
        let (immediate, id) = lock.withLock { () -> (Lease?, UInt64) in
            if let lease = state.take() { return (lease, 0) }
            state.nextWaiterID &+= 1
            return (nil, state.nextWaiterID)
        }
        if let immediate { return immediate }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                lock.lock()
                // A connection may have come back meanwhile.
                if let lease = state.take() {
                    lock.unlock()
                    continuation.resume(returning: lease)
                } else if Task.isCancelled {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                } else {
                    state.waiters.append(.suspended(id: id, continuation))
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            let index = state.waiters.firstIndex { waiter in
                if case .suspended(let waiterID, _) = waiter { return waiterID == id }
                return false
            }
            let removed = index.map { state.waiters.remove(at: $0) }
            lock.unlock()
            if case .suspended(_, let continuation)? = removed {
                continuation.resume(throwing: CancellationError())
            }
        }
    }

    /// The connection a lease stands for, opening it when the lease is for a new one.
    func connection(for lease: Lease) throws -> RawConnection {
        switch lease {
        case .connection(let connection):
            return connection
        case .newConnection:
            do {
                return try openConnection()
            } catch {
                giveBack(.newConnection)
                throw error
            }
        }
    }

    // MARK: Returning

    /// Returns a connection: to the first waiter, or to the free list.
    func release(_ connection: RawConnection) {
        giveBack(.connection(connection))
    }

    private func giveBack(_ lease: Lease) {
        lock.lock()
        let first = state.giveBack(lease)
        lock.unlock()
        guard let waiter = first else { return }
        switch waiter {
        case .blocked(let blocked):
            blocked.lease = lease
            blocked.semaphore.signal()
        case .suspended(_, let continuation):
            continuation.resume(returning: lease)
        }
    }
}
