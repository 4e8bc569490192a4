import Foundation


/// The queue of batches behind a ``ObservedValues``.
final class ChangeFeed<ID: Hashable & Sendable>: DatabaseObserver, ObservationSource, @unchecked Sendable {  // state is guarded by `lock`
    /// Turns a commit's changes into a batch for this table (`nil`: the table did not change).
    typealias Translate = @Sendable (SQLite.Database, ObservedChange) async throws -> ChangeBatch<ID>?

    private let lock = NSLock()
    private weak var database: SQLite.Database?
    let region: DatabaseRegion?
    private let translate: Translate
    private let onEnd: @Sendable (SQLite.Database) -> Void
    /// Commits not yet translated, in order; translated one at a time.
    private var changes: [ObservedChange] = []
    private var isTranslating = false
    private let mailbox = Mailbox<ChangeBatch<ID>>(.everyElement)
    private var isFinished: Bool { mailbox.isClosed }

    init(database: SQLite.Database, table: String, translate: @escaping Translate, onEnd: @escaping @Sendable (SQLite.Database) -> Void = { _ in }) {
        self.database = database
        var region = DatabaseRegion()
        region.insert(table: table, column: nil)
        self.region = region
        self.translate = translate
        self.onEnd = onEnd
    }

    /// A feed that failed before it started: its sequence throws `error`.
    init(failing error: any Error) {
        database = nil
        region = nil
        translate = { _, _ in nil }
        onEnd = { _ in }
        mailbox.close(with: error)
    }

    /// Registers now: the feed is live when this returns.
    func start() {
        guard let database else { return finish(with: nil) }
        do {
            try database.observations.add(self)
        } catch {
            finish(with: error)
        }
    }

    func databaseChanged(_ change: ObservedChange) {
        let start = lock.withLock { () -> Bool in
            guard !isFinished else { return false }
            changes.append(change)
            guard !isTranslating else { return false }
            isTranslating = true
            return true
        }
        if start { Task { await translatePending() } }
    }

    func databaseClosed() {
        finish(with: nil)
    }

    func cancel() {
        finish(with: nil)
    }

    private func translatePending() async {
        while true {
            let next = lock.withLock { () -> ObservedChange? in
                guard !changes.isEmpty, !isFinished else {
                    isTranslating = false
                    return nil
                }
                return changes.removeFirst()
            }
            guard let next else { return }
            guard let database else { return finish(with: nil) }
            do {
                if let batch = try await translate(database, next) { deliver(batch) }
            } catch {
                return finish(with: error)
            }
        }
    }

    private func deliver(_ batch: ChangeBatch<ID>) {
        mailbox.put(batch)
    }

    private func finish(with error: (any Error)?) {
        guard mailbox.close(with: error), let database else { return }
        database.observations.remove(self)
        onEnd(database)
    }

    func next() async throws -> ChangeBatch<ID>? {
        try await mailbox.take { [weak self] in self?.cancel() }
    }
}
