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

    /// Everything `lock` guards, in one value.
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

        /// Keeps a lease nobody waits for: the connection is free again, or may be opened again.
        mutating func keep(_ lease: Lease) {
            switch lease {
            case .connection(let connection): available.append(connection)
            case .newConnection: openCount -= 1
            }
        }
    }

    private let lock = NSLock()
    /// Read and written only under `lock`.
    private let state: UncheckedState<State>
    private let openConnection: () throws -> RawConnection

    /// A pool that opens connections with `open`, up to `maximumCount`, starting with `initial`.
    init(maximumCount: Int, initial: [RawConnection] = [], open: @escaping () throws -> RawConnection) {
        state = UncheckedState(State(available: initial, openCount: initial.count, maximumCount: max(1, maximumCount, initial.count)))
        openConnection = open
    }

    // MARK: Taking

    /// A connection, waiting on this thread while every connection is taken.
    func acquire() throws -> RawConnection {
        lock.lock()
        if let lease = state.pointee.take() {
            lock.unlock()
            return try connection(for: lease)
        }
        let waiter = BlockedWaiter()
        state.pointee.waiters.append(.blocked(waiter))
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
            guard state.pointee.waiters.isEmpty else { return nil }
            return state.pointee.available.popLast()
        }
    }

    /// A lease, suspending (without blocking a thread) while every connection is taken.
    /// Open a ``Lease/newConnection`` with ``connection(for:)`` off the cooperative pool.
    func lease() async throws -> Lease {
        let (immediate, id) = lock.withLock { () -> (Lease?, UInt64) in
            if let lease = state.pointee.take() { return (lease, 0) }
            state.pointee.nextWaiterID &+= 1
            return (nil, state.pointee.nextWaiterID)
        }
        if let immediate { return immediate }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                lock.lock()
                // A connection may have come back meanwhile.
                if let lease = state.pointee.take() {
                    lock.unlock()
                    continuation.resume(returning: lease)
                } else if Task.isCancelled {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                } else {
                    state.pointee.waiters.append(.suspended(id: id, continuation))
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            let index = state.pointee.waiters.firstIndex { waiter in
                if case .suspended(let waiterID, _) = waiter { return waiterID == id }
                return false
            }
            let removed = index.map { state.pointee.waiters.remove(at: $0) }
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
        guard !state.pointee.waiters.isEmpty else {
            state.pointee.keep(lease)
            lock.unlock()
            return
        }
        let waiter = state.pointee.waiters.removeFirst()
        lock.unlock()
        switch waiter {
        case .blocked(let blocked):
            blocked.lease = lease
            blocked.semaphore.signal()
        case .suspended(_, let continuation):
            continuation.resume(returning: lease)
        }
    }
}
