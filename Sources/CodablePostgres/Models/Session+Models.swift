#if Postgres
import Foundation
import PostgresNIO

/// The model API's statements, written once for both ``Postgres/Database`` and ``Postgres/Transaction``.
extension Postgres.Session {
    func save<T: Model>(_ values: [T]) async throws -> [T] {
        try await saveReporting(values).saved
    }

    /// The values as saved, and whether any differs from the value given (an id assigned or a
    /// date rounded to microseconds, at any depth of a graph).
    ///
    /// `graphIDs` are the explicit ids of the whole graph being saved (a type reached by two
    /// relationships is upserted twice): no id assigned in one upsert may take one of them.
    func saveReporting<T: Model>(_ values: [T], graphIDs: ExplicitIDs? = nil) async throws -> (saved: [T], changed: Bool) {
        guard let first = values.first else { return ([], false) }
        let table = try await table(for: T.self, sample: first)
        if !table.schema.relationships.isEmpty {
            let graphIDs = try graphIDs ?? ExplicitIDs(ofGraphs: values)
            return try await allOrNothing { try await saveGraph(values, table: table, graphIDs: graphIDs) }
        }
        if !table.schema.assignsID, values.count > Self.chunkSize {
            return try await saveInChunks(values, table: table, chunkSize: Self.chunkSize)
        }
        let arrays = try ColumnArrays(values, table: table)
        let assignedIDs = try await upsert(arrays, into: table, avoiding: graphIDs?.ids(of: T.self) ?? [])
        // What was stored, where it differs from what was given.
        var saved = values
        let reader = ColumnArrays.savedValueReader(table: table)
        for (position, row) in arrays.rowOfValue.enumerated() where row >= 0 {
            if let value = try arrays.savedValue(T.self, row: row, assignedID: assignedIDs[row], table: table, reader: reader) { saved[position] = value }
        }
        return (saved, arrays.rewritesAny)
    }

    /// How many values a statement of a large save writes (``saveInChunks(_:table:chunkSize:)``); tests
    /// make it smaller, to cross statements with few values.
    @TaskLocal static var chunkSize = 10_000

    /// Whether a save leaves related values whose rows exist as stored (creating only missing
    /// ones): the sync engine's saves, where each row travels by its own change and a copy inside
    /// another value's graph may be older.
    @TaskLocal package static var keepsExistingRelated = false

    /// A large save of a model whose ids the database does not assign, as one statement per
    /// ``chunkSize`` values in the call's transaction, the client's work overlapping the
    /// server's: while the server writes one chunk, the next is encoded and the stored form of
    /// this one decoded. (The server and the client each take about half of a large save; one
    /// statement would run them one after the other.)
    ///
    /// The values are written in the order of their ids, as one statement writes its rows, so
    /// that concurrent saves sharing rows lock them in one order; values with the same id keep
    /// their order, so the last one given is the one stored. A failure part-way fails the
    /// transaction (``allOrNothing(_:)``): no statement of it can be committed.
    private func saveInChunks<T: Model>(_ values: [T], table: PostgresTable, chunkSize: Int) async throws -> (saved: [T], changed: Bool) {
        let chunkSize = max(1, chunkSize)
        let ids = try values.map { try JSONForm.storedValue($0.id) }
        let order = values.indices.sorted { left, right in
            Self.idPrecedes(ids[left], ids[right]) ?? (left < right)
        }
        func arrays(from start: Int) throws -> ColumnArrays? {
            guard start < order.count else { return nil }
            return try ColumnArrays(order[start..<min(start + chunkSize, order.count)].map { values[$0] }, table: table)
        }
        let reader = ColumnArrays.savedValueReader(table: table)
        let first = try arrays(from: 0)   // a value that cannot be encoded here has written nothing
        return try await allOrNothing {
            var saved = values
            var changed = false
            var start = 0
            var next = first
            while let chunk = next {
                async let written = upsert(chunk, into: table)
                // Meanwhile, on this task: what this chunk stored, and the next chunk.
                let prepared = Swift.Result<ColumnArrays?, any Swift.Error> {
                    for (offset, row) in chunk.rowOfValue.enumerated() where row >= 0 {
                        if let value = try chunk.savedValue(T.self, row: row, assignedID: nil, table: table, reader: reader) { saved[order[start + offset]] = value }
                    }
                    changed = changed || chunk.rewritesAny
                    start += chunk.rowOfValue.count
                    return try arrays(from: start)
                }
                // The statement's own outcome first (a failure there is the one to report), and
                // never cancelled for a failure on this side.
                _ = try await written
                next = try prepared.get()
            }
            return (saved, changed)
        }
    }

    /// Whether id `left` comes before `right` in the order PostgreSQL sorts the id column
    /// (`bigint`, `double precision`, `uuid` and `text COLLATE "C"` by bytes, `bytea`); `nil` when
    /// they are the same or cannot be compared here.
    private static func idPrecedes(_ left: StoredValue, _ right: StoredValue) -> Bool? {
        switch (left, right) {
        case (.integer(let a), .integer(let b)): return a == b ? nil : a < b
        case (.double(let a), .double(let b)): return a == b ? nil : a < b
        case (.text(let a), .text(let b)): return a.utf8.elementsEqual(b.utf8) ? nil : a.utf8.lexicographicallyPrecedes(b.utf8)
        case (.data(let a), .data(let b)): return a == b ? nil : a.lexicographicallyPrecedes(b)
        default: return nil
        }
    }

    /// Runs `body`, several statements that make one call, so that a failure part-way never
    /// leaves the first of them to be committed: the transaction is marked failed (as a failing
    /// statement marks it), so a caller's transaction that catches the error cannot commit
    /// (``Postgres/Database/inTransaction(_:)`` throws `25P02`; a savepoint,
    /// `tx.inTransaction { inner in … }`, lets it go on). Outside a caller's transaction the call's own
    /// transaction rolls back anyway.
    func allOrNothing<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch {
            transaction?.failed(error)
            throw error
        }
    }

    /// Upserts the rows of `arrays`; the ids the database assigned, by row. Assigned ids avoid the
    /// explicit ids of the rows and `avoiding`.
    func upsert(_ arrays: ColumnArrays, into table: PostgresTable, avoiding: Set<Int64> = []) async throws -> [Int: Int64] {
        var binds = PostgresBindings()
        try arrays.bind(to: &binds)
        var assignedIDs: [Int: Int64] = [:]
        if let upsert = table.upsertAssigningIDs, !arrays.idLessRows.isEmpty {
            let explicit = arrays.explicitIDs.union(avoiding)
            binds.append(try await reservedIDs(for: arrays.idLessRows, count: arrays.rowCount, avoiding: explicit, table: table))
            let ids = try await integers(upsert, binds)
            guard ids.count == arrays.idLessRows.count else {
                throw ModelError(.unexpectedResult, table.schema.modelType, "saving \(arrays.idLessRows.count) values without an id returned \(ids.count) ids")
            }
            assignedIDs = Dictionary(uniqueKeysWithValues: zip(arrays.idLessRows, ids))
        } else {
            _ = try await rows(table.upsert, binds)
        }
        if !arrays.explicitIDs.isEmpty, let advance = table.advanceIDSequence { _ = try await rows(advance) }
        return assignedIDs
    }

    /// The `bigint[]` literal of ids for the id-less values at rows `positions` of the save's column
    /// arrays (`{}` when the save
    /// gives no id explicitly: the sequence then assigns them as rows are inserted). Drawn from the
    /// id sequence, skipping the save's explicit ids, so that an assigned id never takes one of them.
    private func reservedIDs(for positions: [Int], count: Int, avoiding explicit: Set<Int64>, table: PostgresTable) async throws -> String {
        guard !positions.isEmpty, !explicit.isEmpty, let reserve = table.reserveIDs else { return "{}" }
        var binds = PostgresBindings()
        binds.append(Int64(positions.count + explicit.count))
        var drawn: [Int64] = []
        for row in try await rows(reserve, binds) {
            let id = try row.decode(Int64.self)
            if !explicit.contains(id) { drawn.append(id) }
        }
        guard drawn.count >= positions.count else {
            throw ModelError(.unexpectedResult, table.schema.modelType, "the id sequence gave too few ids for the values saved without one")
        }
        var ids = [String](repeating: "NULL", count: count)
        for (position, id) in zip(positions, drawn) { ids[position] = String(id) }
        return "{" + ids.joined(separator: ",") + "}"
    }

    func get<T: Model>(with filter: Filter<T>) async throws -> [T] {
        guard let table = try await readTable(for: T.self) else { return [] }
        var binds = PostgresBindings()
        let sql = table.select + (try filter.clauses(table: table, binds: &binds))
        return try table.reading.decode(T.self, try await rows(sql, binds), sql: sql)
    }

    func get<T: Model>(_ type: T.Type, id: T.ID) async throws -> T? {
        guard let table = try await readTable(for: T.self) else { return nil }
        var binds = PostgresBindings()
        let sql = table.select + " WHERE \(table.id.quoted) = " + table.id.kind.parameter(try JSONForm.storedValue(id), &binds)
        return try table.reading.decode(T.self, try await rows(sql, binds), sql: sql).first
    }

    func count<T: Model>(with filter: Filter<T>) async throws -> Int {
        guard let table = try await readTable(for: T.self) else { return 0 }
        var dialect = PostgresDialect(table: table, binds: PostgresBindings())
        let sql = try filter.countSQL(table: table.quotedTable, in: &dialect)
        return Int(try await integers(sql, dialect.binds).first ?? 0)
    }

    func delete<T: Model>(with filter: Filter<T>) async throws -> Int {
        guard let table = try await readTable(for: T.self) else { return 0 }
        var dialect = PostgresDialect(table: table, binds: PostgresBindings())
        let condition = try filter.deleteCondition(table: table.quotedTable, id: table.id.quoted, in: &dialect)
        let binds = dialect.binds
        if !table.schema.relationships.isEmpty {
            // The rows' ids first (locked), so that the delete rules see exactly the rows deleted.
            let ids = try await rows("SELECT \(table.id.quoted)::text FROM \(table.quotedTable)\(condition) FOR UPDATE", binds).map { try $0.decode(String.self) }
            return try await deleteGraph(table: table, ids: ids)
        }
        return try await countingDeleted(from: table, where: condition, binds)
    }

    func delete<T: Model>(_ type: T.Type, ids: [T.ID]) async throws -> Int {
        guard !ids.isEmpty, let table = try await readTable(for: T.self) else { return 0 }
        if !table.schema.relationships.isEmpty {
            return try await deleteGraph(table: table, ids: try ids.compactMap { Self.idText(try JSONForm.storedValue($0)) })
        }
        var binds = PostgresBindings()
        var list: [String] = []
        for id in ids { list.append(table.id.kind.parameter(try JSONForm.storedValue(id), &binds)) }
        return try await countingDeleted(from: table, where: " WHERE \(table.id.quoted) IN (\(list.joined(separator: ", ")))", binds)
    }

    /// Deletes rows of `table`; how many. A row that a non-optional to-one relationship still
    /// refers to is refused with `ModelError.Code.deleteDenied`.
    func countingDeleted(from table: PostgresTable, where condition: String, _ binds: PostgresBindings) async throws -> Int {
        let sql = "WITH deleted AS (DELETE FROM \(table.quotedTable)\(condition) RETURNING 1) SELECT count(*) FROM deleted"
        do {
            return Int(try await integers(sql, binds).first ?? 0)
        } catch let error as Postgres.Error where error.sqlState == "23503" {
            throw DeleteRules.stillReferenced(table.schema.modelType, detail: error.message)
        }
    }
}
#endif
