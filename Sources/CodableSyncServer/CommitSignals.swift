#if Postgres
import CodablePostgres
import CodableSyncProtocol
import Foundation

/// The server's commit signals, shared by every waiting request: one listening stream for the
/// endpoint (started with the first wait), however many devices wait. A wake-up reads, in one
/// statement, which accounts the new log entries concern, and answers only their waiters: a
/// commit of one account costs the other accounts' idle devices nothing.
///
/// Sendable: its state is behind a lock.
final class CommitSignals: Sendable {
    private struct State {
        var waiters: [UUID: (account: String, waiter: Waiter)] = [:]
        /// The log's newest version the last wake-up read: the next reads the entries after it;
        /// `nil` when unknown (nobody was waiting: the next wake-up tells everyone to check).
        var seen: Int64?
        /// A wake-up's read is under way; another is wanted after it.
        var delivering = false
        var deliverAgain = false
        /// Signals so far: a waiter that waits again with the count of its last check skips the
        /// check when no signal came since (an idle device's keep-alives cost no query).
        var signals = 0
        var listening: Task<Void, Never>?
        /// Ends once the listening stream is subscribed (or its first try failed).
        var subscribed: Task<Void, Never>?
        /// A wake-up was delivered less than ``coalescing`` ago.
        var coalescing = false
        /// A signal came during that interval.
        var wakePending = false
    }

    /// One waiting request: answered once, by whichever comes first (a signal, the timeout,
    /// cancellation), before or after it starts waiting.
    private final class Waiter: Sendable {
        private let state = Locked<(continuation: CheckedContinuation<Bool, Never>?, result: Bool?)>((nil, nil))

        func answer(_ result: Bool) {
            let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard state.result == nil else { return nil }
                state.result = result
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume(returning: result)
        }

        func result() async -> Bool {
            await withCheckedContinuation { continuation in
                let answered = state.withLock { state -> Bool? in
                    if state.result == nil { state.continuation = continuation }
                    return state.result
                }
                if let answered { continuation.resume(returning: answered) }
            }
        }
    }

    private let server: Postgres.SyncServer
    private let state = Locked(State())

    init(server: Postgres.SyncServer) { self.server = server }

    deinit {
        state.withLock { state in
            state.listening?.cancel()
            state.subscribed?.cancel()
        }
    }

    /// Wakes every waiting request (a change the server made or heard of): the first signal at
    /// once, then at most once per ``coalescing`` interval while signals keep coming. A burst of
    /// commits (one account's flood of pushes, each also heard back from PostgreSQL) costs the
    /// waiting devices one check per interval, not one a commit, and a lone commit no delay.
    func wake() {
        let now = state.withLock { state -> Bool in
            state.signals += 1
            if state.coalescing {
                state.wakePending = true
                return false
            }
            state.coalescing = true
            return true
        }
        guard now else { return }
        deliver()
        Task { [weak self] in await self?.endCoalescing() }
    }

    /// How long signals after a wake-up gather before the next one.
    static let coalescing: Duration = .milliseconds(25)

    /// After ``coalescing``: one more wake-up if signals came meanwhile (and another interval),
    /// or the end of the interval.
    private func endCoalescing() async {
        while true {
            try? await Task.sleep(for: Self.coalescing)
            let again = state.withLock { state -> Bool in
                guard state.wakePending else {
                    state.coalescing = false
                    return false
                }
                state.wakePending = false
                return true
            }
            guard again else { return }
            deliver()
        }
    }

    /// Answers the waiters of the accounts the entries since the last wake-up concern (all of
    /// them when that cannot be told): one read at a time, another after it if signals came
    /// meanwhile. Nobody waiting: nothing is read (a waiter checks for itself when it comes).
    private func deliver() {
        let start = state.withLock { state -> Bool in
            if state.waiters.isEmpty {
                state.seen = nil
                return false
            }
            if state.delivering {
                state.deliverAgain = true
                return false
            }
            state.delivering = true
            return true
        }
        guard start else { return }
        Task { [weak self] in
            while let self {
                await self.deliverConcerned()
                let again = self.state.withLock { state -> Bool in
                    if state.deliverAgain {
                        state.deliverAgain = false
                        return true
                    }
                    state.delivering = false
                    return false
                }
                if !again { return }
            }
        }
    }

    private func deliverConcerned() async {
        let since = state.withLock { $0.seen }
        var accounts: Set<String>?, top: Int64?
        do {
            if let since {
                (accounts, top) = try await server.accountsConcerned(after: since)
            } else {
                top = try await server.newestVersion()   // unknown before it: everyone checks
            }
        } catch {
            // Unknown: everyone checks; the next wake-up starts from what is known.
        }
        let waiters = state.withLock { state -> [Waiter] in
            if let top { state.seen = max(state.seen ?? 0, top) }
            let chosen = state.waiters.filter { accounts?.contains($0.value.account) ?? true }
            for key in chosen.keys { state.waiters.removeValue(forKey: key) }
            return chosen.values.map(\.waiter)
        }
        for waiter in waiters { waiter.answer(true) }
    }

    /// `true` as soon as `hasNews` says so: at once, or after a commit signal; `false` after
    /// `timeout` (or when cancelled). A signal for rows `hasNews` does not see (another
    /// account's) goes on waiting.
    ///
    /// `checked`: the signal count of the caller's last check (`nil`: none), which a wait that
    /// times out sets, so that the caller's next wait skips its first check when no signal came
    /// meanwhile (an event stream's keep-alives); a wait that answers `true` sets it to `nil`.
    func wait(
        timeout: Duration, account: String, checked: inout Int?, hasNews: @escaping @Sendable () async throws -> Bool
    ) async throws -> Bool {
        // Listening before the first check: a commit after it is heard, even by the first wait.
        await listen()
        let deadline = ContinuousClock.now + timeout
        var skipCheck = checked != nil
        while true {
            let id = UUID(), waiter = Waiter()
            // Registered first, then checked: a commit in between wakes it.
            let signals = state.withLock { state -> Int in
                state.waiters[id] = (account, waiter)
                return state.signals
            }
            defer { state.withLock { _ = $0.waiters.removeValue(forKey: id) } }
            if !(skipCheck && signals == checked), try await hasNews() {
                checked = nil
                return true
            }
            skipCheck = false
            checked = signals
            let timer = Task {
                try? await Task.sleep(until: deadline)
                waiter.answer(false)
            }
            defer { timer.cancel() }
            let signalled = await withTaskCancellationHandler {
                await waiter.result()
            } onCancel: {
                waiter.answer(false)
            }
            if !signalled { return false }
        }
    }

    /// Starts the listening stream (once), and returns when it listens.
    private func listen() async {
        let subscribed = state.withLock { state -> Task<Void, Never> in
            if let subscribed = state.subscribed { return subscribed }
            let (ready, isReady) = AsyncStream<Void>.makeStream()
            state.listening = Task.detached { [weak self] in
                var listenedBefore = false
                while !Task.isCancelled {
                    do {
                        guard let stream = try await self?.server.serverChanges() else {
                            isReady.finish()
                            return
                        }
                        isReady.finish()
                        // Listening again after a failure: commits made meanwhile were not heard,
                        // so every waiter checks once more.
                        if listenedBefore { self?.wake() }
                        listenedBefore = true
                        for try await _ in stream { self?.wake() }
                    } catch {
                        // The listening connection failed: waiters time out meanwhile; try again.
                        isReady.finish()
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
            }
            let subscribed = Task { for await _ in ready {} }
            state.subscribed = subscribed
            return subscribed
        }
        await subscribed.value
    }
}
#endif
