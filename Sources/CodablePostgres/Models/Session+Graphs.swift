#if Postgres
import Foundation
import PostgresNIO

/// Saving and deleting values with relationships on PostgreSQL: the steps of `GraphSave` and the
/// rules of `DeleteRules` (CodableModels), the same decisions SQLite carries out.
///
/// Statements go per relationship edge, never per value: all the values one call saves of a
/// target type at one place in the graph are one upsert, and each to-many's links one delete and
/// one insert, whatever the number of values. Every upsert writes its rows in id order, so
/// concurrent saves of the same shapes (from other app instances too) lock shared rows in one
/// order; a deadlock the server still breaks (other shapes, other statements) is retried, outside
/// a caller's transaction (``Postgres/Session/writing(_:)``). A call runs in one transaction.
extension Postgres.Session {
    /// Saves `values` (all of a type with relationships) and their related values; returns them as
    /// saved, and whether any differs from what was given (then they are read back, ids assigned
    /// at every depth included).
    func saveGraph<T: Model>(_ values: [T], table: PostgresTable, graphIDs: ExplicitIDs) async throws -> (saved: [T], changed: Bool) {
        var changed = false
        var toOneIDs: [String: [String?]] = [:]
        var links: [String: [[String]]] = [:]
        var ownerIDs: [String?] = []
        for step in GraphSave.steps(for: table.schema) {
            switch step {
            case .related(let relationship):
                try await saveRelated(relationship)
            case .values:
                ownerIDs = try await saveValues()
            case .links(let relationship):
                guard let target = table.targets[relationship.name], let targets = links[relationship.name] else { continue }
                try await replaceLinks(relationship, owners: ownerIDs, targets: targets, ownerKind: table.id.kind, targetKind: target.id.kind)
            }
        }

        // The related values of one relationship, for all the values: one save per target type.
        func saveRelated(_ relationship: Relationship) async throws {
            let related = values.map { relationship.related($0) }
            func save<Target: Model>(_ target: Target.Type) async throws -> [[String]] {
                let flat: [Target] = related.flatMap { $0.compactMap { $0 as? Target } }
                if Self.keepsExistingRelated, let targetTable = table.targets[relationship.name] {
                    return try await saveMissing(flat, grouped: related.map(\.count), table: targetTable, graphIDs: graphIDs)
                }
                let (saved, targetsChanged) = try await saveReporting(flat, graphIDs: graphIDs)
                changed = changed || targetsChanged
                var ids: [[String]] = []
                var next = 0
                for group in related {
                    var groupIDs: [String] = []
                    for value in saved[next..<(next + group.count)] {
                        guard let id = Self.idText(try JSONForm.storedValue(value.id)) else {
                            throw ModelError(.unexpectedResult, Target.self, "a value saved for \(relationship.qualifiedName) has no id")
                        }
                        groupIDs.append(id)
                    }
                    next += group.count
                    ids.append(groupIDs)
                }
                return ids
            }
            let ids = try await save(relationship.target)
            if relationship.isToMany {
                links[relationship.name] = ids
            } else {
                toOneIDs[relationship.name] = ids.map { $0.first }
            }
        }

        // The values in one upsert; returns each value's stored id, nil for one replaced by a
        // later value with its id (which wins, links included).
        func saveValues() async throws -> [String?] {
            let arrays = try ColumnArrays(values, table: table, toOneIDs: toOneIDs)
            let assignedIDs = try await upsert(arrays, into: table, avoiding: graphIDs.ids(of: T.self))
            changed = changed || arrays.rewritesAny || !assignedIDs.isEmpty
            guard let idColumn = table.columns.firstIndex(where: { $0.name == table.id.name }) else {
                throw ModelError(.unexpectedResult, T.self, "has no id column")
            }
            return arrays.rowOfValue.map { row in
                guard row >= 0 else { return nil }
                return assignedIDs[row].map(String.init) ?? arrays.columns[idColumn][row]
            }
        }

        guard changed else { return (values, false) }
        // Read back what was stored (one statement for the whole graph).
        var binds = PostgresBindings()
        binds.append(ownerIDs.compactMap { $0 })
        let sql = table.select + " WHERE \(table.quotedTable).\(table.id.quoted) = ANY($1::text[]::\(table.id.kind.sqlType)[])"
        var byID: [String: T] = [:]
        for value in try table.reading.decode(T.self, try await rows(sql, binds), sql: sql) {
            if let id = Self.idText(try JSONForm.storedValue(value.id)) { byID[id] = value }
        }
        var saved = values
        for (position, id) in ownerIDs.enumerated() {
            if let id, let value = byID[id] { saved[position] = value }
        }
        return (saved, true)
    }

    /// Related values saved the sync engine's way (``keepsExistingRelated``): only those whose
    /// rows are missing are written; returns every value's id, in groups of the given sizes.
    private func saveMissing<Target: Model>(
        _ values: [Target], grouped sizes: [Int], table: PostgresTable, graphIDs: ExplicitIDs
    ) async throws -> [[String]] {
        let ids = try values.map { value -> String in
            guard let id = Self.idText(try JSONForm.storedValue(value.id)) else {
                throw ModelError(.unsupportedModel, Target.self, "a related value has no id, which a save that keeps existing values needs")
            }
            return id
        }
        var binds = PostgresBindings()
        binds.append(ids)
        let existing = Set(try await rows("""
            SELECT x FROM unnest($1::text[]) AS x WHERE EXISTS (
                SELECT 1 FROM \(table.quotedTable) WHERE \(table.id.quoted) = x::\(table.id.kind.sqlType))
            """, binds).map { try $0.decode(String.self) })
        let missing = zip(values, ids).filter { !existing.contains($0.1) }.map(\.0)
        if !missing.isEmpty { _ = try await saveReporting(missing, graphIDs: graphIDs) }
        var groups: [[String]] = []
        var next = 0
        for size in sizes {
            groups.append(Array(ids[next..<(next + size)]))
            next += size
        }
        return groups
    }

    /// Makes each owner's links hold exactly its targets, in order: one delete and one insert for
    /// all the owners of the call.
    private func replaceLinks(
        _ relationship: Relationship, owners: [String?], targets: [[String]], ownerKind: ColumnKind, targetKind: ColumnKind
    ) async throws {
        let link = SQLName.quoted(relationship.linkTable)
        var owned: [String] = [], linkOwners: [String?] = [], positions: [String?] = [], linkTargets: [String?] = []
        for (owner, targets) in zip(owners, targets) {
            guard let owner else { continue }
            owned.append(owner)
            for (position, target) in targets.enumerated() {
                linkOwners.append(owner)
                positions.append(String(position))
                linkTargets.append(target)
            }
        }
        guard !owned.isEmpty else { return }
        var binds = PostgresBindings()
        binds.append(owned)
        _ = try await rows("DELETE FROM \(link) WHERE \"owner\" = ANY($1::text[]::\(ownerKind.sqlType)[])", binds)
        guard !linkOwners.isEmpty else { return }
        var insert = PostgresBindings()
        for column in [linkOwners, positions, linkTargets] { try insert.append(TextArray(elements: column), context: .default) }
        _ = try await rows("""
            INSERT INTO \(link) ("owner", "position", "target") \
            SELECT \(ownerKind.fromText("u.o")), u.p::integer, \(targetKind.fromText("u.t")) \
            FROM unnest($1::text[], $2::text[], $3::text[]) AS u(o, p, t)
            """, insert)
    }

    /// Deletes the rows of `table` with these ids (as text) and applies the delete rules: `.deny`
    /// refuses (before anything changes) while related values exist, `.cascade` deletes them
    /// after, following their own rules. Returns how many rows of `table` were deleted.
    func deleteGraph(table: PostgresTable, ids: [String]) async throws -> Int {
        guard !ids.isEmpty else { return 0 }
        let idList = "$1::text[]::\(table.id.kind.sqlType)[]"
        var binds = PostgresBindings()
        binds.append(ids)
        let ruled = DeleteRules.checked(in: table.schema)
        if !ruled.isEmpty {
            // The rows first, locked in id order: a concurrent save can no longer link a value
            // between the rules' checks and the delete.
            _ = try await rows("SELECT 1 FROM \(table.quotedTable) WHERE \(table.id.quoted) = ANY(\(idList)) ORDER BY \(table.id.quoted) FOR UPDATE", binds)
        }
        var found: [(Relationship, [String])] = []
        for relationship in ruled {
            guard table.targets[relationship.name] != nil else { continue }
            let sql: String
            if relationship.isToMany {
                sql = "SELECT DISTINCT \"target\"::text FROM \(SQLName.quoted(relationship.linkTable)) WHERE \"owner\" = ANY(\(idList))"
            } else {
                guard let column = table.column(named: relationship.name) else { continue }
                sql = "SELECT DISTINCT \(column.quoted)::text FROM \(table.quotedTable) WHERE \(table.id.quoted) = ANY(\(idList)) AND \(column.quoted) IS NOT NULL"
            }
            found.append((relationship, try await rows(sql, binds).map { try $0.decode(String.self) }))
        }
        let cascades = try DeleteRules.decide(for: table.schema, found: found)
        // The links go with their owner (ON DELETE CASCADE).
        let deleted = try await countingDeleted(from: table, where: " WHERE \(table.id.quoted) = ANY(\(idList))", binds)
        for (relationship, related) in cascades {
            if let target = table.targets[relationship.name] { _ = try await deleteGraph(table: target, ids: related) }
        }
        return deleted
    }

    /// A stored id as text, as a `text[]` element carries it (`nil` for NULL).
    static func idText(_ value: StoredValue) -> String? {
        switch value {
        case .null: nil
        case .integer(let integer): String(integer)
        case .double(let real): String(real)
        case .text(let text): text
        case .data(let data): data.base64EncodedString()
        }
    }
}
#endif
