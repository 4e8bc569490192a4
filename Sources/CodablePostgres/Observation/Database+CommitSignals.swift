#if Postgres
import Foundation

extension Postgres.Database {
    /// A signal after each commit (by any client of the server) that changes one of `types`'
    /// tables or a table their values are read from (link tables, related models'), and after the
    /// listening connection came back from a loss (anything may have changed meanwhile). For
    /// CodableSync, whose running devices pull when the server changed.
    ///
    /// Signals that come faster than they are taken are merged into one.
    package func commitSignals(for types: [any (Model & Sendable).Type]) async throws -> AsyncThrowingStream<Void, any Swift.Error> {
        var tables = Set<String>()
        for type in types { tables.formUnion(try await notifyingTables(of: type)) }
        let (stream, continuation) = AsyncThrowingStream<Void, any Swift.Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let feed = SignalFeed(tables: tables, continuation: continuation)
        continuation.onTermination = { [weak listener] _ in listener?.unsubscribe(feed) }
        do {
            try await listener.subscribe(feed)
        } catch {
            listener.unsubscribe(feed)   // a failed subscription may stay registered
            continuation.finish()
            throw error
        }
        return stream
    }

    private func notifyingTables<T: Model & Sendable>(of type: T.Type) async throws -> Set<String> {
        // The signals' owner (the sync server) writes the tables: they are prepared, then followed.
        _ = try await session.table(for: type)
        return try await startNotifying(type).tables
    }
}

/// The subscriber behind ``Postgres/Database/commitSignals(for:)``.
private final class SignalFeed: ChangeSubscriber, Sendable {
    let tables: Set<String>
    var wantsWholeTransactions: Bool { false }
    private let continuation: AsyncThrowingStream<Void, any Swift.Error>.Continuation

    init(tables: Set<String>, continuation: AsyncThrowingStream<Void, any Swift.Error>.Continuation) {
        self.tables = tables
        self.continuation = continuation
    }

    func committed(_ commit: ChangeNotifications.TableCommit) { continuation.yield(()) }
    func resumed() { continuation.yield(()) }
    func databaseClosed() { continuation.finish() }
}
#endif
