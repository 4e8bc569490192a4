import Foundation

/// What one committed transaction changed in a table: the rowids (for SQL tables on SQLite) or
/// ids (for models, on both engines) of the rows it inserted, updated and deleted.
///
/// ```swift
/// for try await batch in db.changes(to: Person.self) {
///     print(batch.inserted, batch.updated, batch.deleted)
/// }
/// ```
///
/// A row inserted and then updated in the same transaction is in both ``inserted`` and
/// ``updated``; one inserted and deleted is in both ``inserted`` and ``deleted``. An update that
/// changes a row's id (`UPDATE … SET id = …` in SQL of your own) deletes the old id and inserts
/// the new one, on both engines (``noteUpdate(old:new:)`` decides it for both).
///
/// `changes(to:)` and `changes(in:)` give the batches of one table as an ``ObservedValues``, one
/// per committed transaction that changed it, in commit order. It is live from the moment it is
/// made, so a commit made after the call returns is never missed; batches wait for the consumer
/// (none is dropped or merged). Iterate it once; dropping it (and its iterator) stops it and
/// removes what it installed.
///
/// ```swift
/// let changes = db.changes(in: "tasks")
/// try db.write("DELETE FROM tasks WHERE id = 3")
/// for try await batch in changes { print(batch.deleted) }   // [3]
/// ```
///
/// Sendable: a value.
public struct ChangeBatch<ID: Hashable & Sendable>: Sendable, Equatable {
    /// Rows inserted.
    public var inserted: Set<ID>
    /// Rows updated (including by `INSERT OR REPLACE`'s and UPSERT's update).
    public var updated: Set<ID>
    /// Rows deleted.
    public var deleted: Set<ID>
    /// `false` when rows changed that the batch cannot name. Read the table again. SQLite: another
    /// connection or process committed (the table may or may not have changed), or the table is
    /// `WITHOUT ROWID`. PostgreSQL: the table was truncated, a statement changed more rows than a
    /// notification can name, or the listening connection was lost and is back (what happened
    /// meanwhile is unknown).
    public var isComplete: Bool

    /// A batch.
    ///
    /// ```swift
    /// let batch = ChangeBatch<Int64>(inserted: [1], updated: [], deleted: [], isComplete: true)
    /// ```
    package init(inserted: Set<ID>, updated: Set<ID>, deleted: Set<ID>, isComplete: Bool) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.isComplete = isComplete
    }

    /// Adds what updates did, from the ids of the rows before (`old`) and after (`new`): an id
    /// in both was updated; one only after was inserted (an id changed to it), one only before
    /// was deleted (an id changed from it). Each engine passes its updates' ids through this one
    /// rule (a PostgreSQL statement's transition tables, SQLite's triggers' old and new keys).
    package mutating func noteUpdate(old: Set<ID>, new: Set<ID>) {
        updated.formUnion(new.intersection(old))
        inserted.formUnion(new.subtracting(old))
        deleted.formUnion(old.subtracting(new))
    }
}
