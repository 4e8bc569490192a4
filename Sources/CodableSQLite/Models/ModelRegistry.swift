import Foundation

/// The model tables a database has prepared, by model type.
///
/// What a transaction on the writer creates or alters is kept apart until it commits: only the
/// writer's own transaction sees it (other threads would find no such table yet), and a
/// rollback forgets it.
final class ModelRegistry: TransactionObserver, @unchecked Sendable {  // every access goes through `lock`
    private struct Tables {
        var byType: [ObjectIdentifier: ModelTable] = [:]
        var hasKeyValueTable = false
    }

    private let lock = NSLock()
    /// The committed tables and the writer's open transaction's, read and written under `lock`
    /// (every model call looks its table up here).
    private let tables = UncheckedState((committed: Tables(), uncommitted: Tables()))
    private var tableCreatedHandlers: [(ModelReflection, RawConnection) throws -> Void] = []

    /// Calls `handler` whenever a model's table is created, on the writer, inside the creating
    /// transaction (so that what the handler adds, such as triggers, is there before any row).
    /// A hook for the layers above: Models knows nothing of who listens.
    func onTableCreated(_ handler: @escaping (ModelReflection, RawConnection) throws -> Void) {
        lock.withLock { tableCreatedHandlers.append(handler) }
    }

    /// Runs the handlers of ``onTableCreated(_:)``.
    func tableCreated(_ schema: ModelReflection, on connection: RawConnection) throws {
        for handler in lock.withLock({ tableCreatedHandlers }) { try handler(schema, connection) }
    }

    /// The table prepared for `type`; `includingUncommitted` for the writer's open transaction.
    func table(for type: Any.Type, includingUncommitted: Bool) -> ModelTable? {
        let key = ObjectIdentifier(type)
        return lock.withLock {
            (includingUncommitted ? tables.pointee.uncommitted.byType[key] : nil) ?? tables.pointee.committed.byType[key]
        }
    }

    /// Records a table, as committed, or as made by the writer's open transaction.
    func set(_ table: ModelTable, committed isCommitted: Bool) {
        lock.withLock {
            let key = ObjectIdentifier(table.schema.modelType)
            if isCommitted {
                if table.isWritable || tables.pointee.committed.byType[key] == nil { tables.pointee.committed.byType[key] = table }
            } else {
                tables.pointee.uncommitted.byType[key] = table
            }
        }
    }

    func hasKeyValueTable(includingUncommitted: Bool) -> Bool {
        lock.withLock {
            tables.pointee.committed.hasKeyValueTable || (includingUncommitted && tables.pointee.uncommitted.hasKeyValueTable)
        }
    }

    func noteKeyValueTable(committed isCommitted: Bool) {
        lock.withLock {
            if isCommitted {
                tables.pointee.committed.hasKeyValueTable = true
            } else {
                tables.pointee.uncommitted.hasKeyValueTable = true
            }
        }
    }

    /// The writer's transaction committed: what it made is there for everyone.
    func transactionDidCommit() {
        lock.withLock {
            tables.pointee.committed.byType.merge(tables.pointee.uncommitted.byType) { _, new in new }
            if tables.pointee.uncommitted.hasKeyValueTable { tables.pointee.committed.hasKeyValueTable = true }
            tables.pointee.uncommitted = Tables()
        }
    }

    /// The writer's transaction, or one of its savepoints, rolled back: forget what it may have
    /// made (all of it, to be safe: what still exists is found again).
    func transactionDidRollBack() {
        lock.withLock { tables.pointee.uncommitted = Tables() }
    }

    /// Forgets everything, after migrations changed the schema.
    func reset() {
        lock.withLock {
            tables.pointee.committed = Tables()
            tables.pointee.uncommitted = Tables()
        }
    }
}

extension SQLite.Database {
    /// The model tables prepared in this database, kept with the database by Core's attachment
    /// hook and told about the writer's commits and rollbacks.
    var models: ModelRegistry {
        attachment(ModelRegistry.self) { database in
            let registry = ModelRegistry()
            database.addTransactionObserver(registry)
            return registry
        }
    }
}
