import CodableModels
import Foundation

/// The columns of a ``RowDecodable`` type's properties in one statement's result, resolved once
/// (key strategy and all) and kept on the column plan they were resolved with.
final class GeneratedColumns {
    let type: any RowDecodable.Type
    let typeID: ObjectIdentifier
    let keys: [any CodingKey]
    /// The column of each property, -1 when the result has none.
    let columns: [Int32]

    init(type: any RowDecodable.Type, typeID: ObjectIdentifier, decoder: RowDecoder) {
        self.type = type
        self.typeID = typeID
        keys = type.rowCodingKeys
        columns = keys.map { decoder.resolveColumn(named: $0.stringValue) ?? -1 }
    }
}

extension RowDecoder {
    /// The resolved columns when `T` has generated row decoding, `nil` for plain Codable. The
    /// column plan keeps them for the statement's next call, and so is a type's plainness: the
    /// conformance check is made once per plan and type.
    func generatedColumns<T>(for type: T.Type) -> GeneratedColumns? {
        let typeID = ObjectIdentifier(T.self)
        if let generated = plan.generated, generated.typeID == typeID { return generated }
        if plan.plainRowType == typeID { return nil }
        guard let rowType = T.self as? any RowDecodable.Type else {
            plan.plainRowType = typeID
            return nil
        }
        let columns = GeneratedColumns(type: rowType, typeID: typeID, decoder: self)
        plan.generated = columns
        return columns
    }

    /// Decodes the current row and every following one through the generated code.
    func decodeGeneratedRows<T>(_ columns: GeneratedColumns, as type: T.Type, indexesRows: Bool) throws -> [T] {
        func rows<G: RowDecodable>(_ generated: G.Type) throws -> [T] {
            var reader = SQLiteRowReader(decoder: self, columns: columns, indexesRows: indexesRows)
            let values = try G.decodeRows(&reader, capacity: lastRowCount)
            lastRowCount = values.count
            return try identityCast(values, to: [T].self)
        }
        return try rows(columns.type)
    }

    /// Decodes the current row through the generated code.
    func decodeGeneratedRow<T>(_ columns: GeneratedColumns, as type: T.Type) throws -> T {
        func row<G: RowDecodable>(_ generated: G.Type) throws -> T {
            var reader = SQLiteRowReader(decoder: self, columns: columns, indexesRows: false)
            return try identityCast(try G(row: &reader), to: T.self)
        }
        return try row(columns.type)
    }
}

/// The ``RowReader`` generated code reads a row of SQLite through: each call is the
/// `RowKeyedDecodingContainer` call of the same name, with the column already known.
struct SQLiteRowReader: RowReader {
    let decoder: RowDecoder
    let statement: Statement
    let keys: [any CodingKey]
    /// The column of each property, -1 when the result has none.
    let columns: [Int32]
    /// Which properties the layer above decodes itself (relationships), when it does any.
    let overridden: [Bool]?
    /// Whether coding paths start with the row's index, and the current row's.
    let indexesRows: Bool
    private var rowIndex = 0

    init(decoder: RowDecoder, columns: GeneratedColumns, indexesRows: Bool) {
        self.decoder = decoder
        self.indexesRows = indexesRows
        if indexesRows { decoder.rowIndex = 0 }
        statement = decoder.statement
        keys = columns.keys
        self.columns = columns.columns
        overridden = decoder.options.overrides.map { overrides in columns.keys.map { overrides.keys.contains($0.stringValue) } }
    }

    mutating func nextRow() throws -> Bool {
        guard try statement.step() else { return false }
        rowIndex += 1
        if indexesRows { decoder.rowIndex = rowIndex }
        return true
    }

    @inline(__always)
    private func column(_ index: Int) throws -> Int32 {
        let column = columns[index]
        guard column >= 0 else { throw decoder.keyNotFound(keys[index]) }
        return column
    }

    @inline(__always)
    private func presentColumn(_ index: Int) -> PresentColumn? {
        let column = columns[index]
        return decoder.present(column >= 0 ? column : nil)
    }

    /// The key of the property at `index`, for errors. (Callers pass `{ [keys] in Self.key(keys,
    /// index) }`: a closure made here would escape, and cost an allocation per value; one that
    /// captured `self` would copy the whole reader, five references, per value.)
    private static func key(_ keys: [any CodingKey], _ index: Int) -> AnyCodingKey? {
        let key: any CodingKey = keys[index]
        return AnyCodingKey(key)
    }

    private func integer<I: FixedWidthInteger>(_ type: I.Type, _ index: Int) throws -> I {
        try decoder.decodeInteger(I.self, column: try column(index), key: { [keys] in Self.key(keys, index) })
    }

    private func integerIfPresent<I: FixedWidthInteger>(_ type: I.Type, _ index: Int) throws -> I? {
        guard let present = presentColumn(index) else { return nil }
        return try decoder.decodeInteger(I.self, column: present.column, storageClass: present.storageClass, key: { [keys] in Self.key(keys, index) })
    }

    func decode(at index: Int) throws -> Bool { try decoder.decodeBool(column: try column(index), key: { [keys] in Self.key(keys, index) }) }
    func decode(at index: Int) throws -> String { try decoder.decodeString(column: try column(index), key: { [keys] in Self.key(keys, index) }) }
    func decode(at index: Int) throws -> Double { try decoder.decodeFloat(Double.self, column: try column(index), key: { [keys] in Self.key(keys, index) }) }
    func decode(at index: Int) throws -> Float { try decoder.decodeFloat(Float.self, column: try column(index), key: { [keys] in Self.key(keys, index) }) }
    func decode(at index: Int) throws -> Int { try integer(Int.self, index) }
    func decode(at index: Int) throws -> Int8 { try integer(Int8.self, index) }
    func decode(at index: Int) throws -> Int16 { try integer(Int16.self, index) }
    func decode(at index: Int) throws -> Int32 { try integer(Int32.self, index) }
    func decode(at index: Int) throws -> Int64 { try integer(Int64.self, index) }
    func decode(at index: Int) throws -> UInt { try integer(UInt.self, index) }
    func decode(at index: Int) throws -> UInt8 { try integer(UInt8.self, index) }
    func decode(at index: Int) throws -> UInt16 { try integer(UInt16.self, index) }
    func decode(at index: Int) throws -> UInt32 { try integer(UInt32.self, index) }
    func decode(at index: Int) throws -> UInt64 { try integer(UInt64.self, index) }

    func decode<T: Decodable>(at index: Int) throws -> T {
        if let overridden, overridden[index] { return try decoder.requiredOverriddenValue(T.self, key: keys[index]) }
        return try decoder.decodeValue(T.self, column: try column(index), key: { [keys] in Self.key(keys, index) })
    }

    func decodeIfPresent(at index: Int) throws -> Bool? { try presentColumn(index).map { try decoder.decodeBool(column: $0.column, storageClass: $0.storageClass, key: { [keys] in Self.key(keys, index) }) } }
    func decodeIfPresent(at index: Int) throws -> String? { try presentColumn(index).map { try decoder.decodeString(column: $0.column, storageClass: $0.storageClass, key: { [keys] in Self.key(keys, index) }) } }
    func decodeIfPresent(at index: Int) throws -> Double? { try presentColumn(index).map { try decoder.decodeFloat(Double.self, column: $0.column, storageClass: $0.storageClass, key: { [keys] in Self.key(keys, index) }) } }
    func decodeIfPresent(at index: Int) throws -> Float? { try presentColumn(index).map { try decoder.decodeFloat(Float.self, column: $0.column, storageClass: $0.storageClass, key: { [keys] in Self.key(keys, index) }) } }
    func decodeIfPresent(at index: Int) throws -> Int? { try integerIfPresent(Int.self, index) }
    func decodeIfPresent(at index: Int) throws -> Int8? { try integerIfPresent(Int8.self, index) }
    func decodeIfPresent(at index: Int) throws -> Int16? { try integerIfPresent(Int16.self, index) }
    func decodeIfPresent(at index: Int) throws -> Int32? { try integerIfPresent(Int32.self, index) }
    func decodeIfPresent(at index: Int) throws -> Int64? { try integerIfPresent(Int64.self, index) }
    func decodeIfPresent(at index: Int) throws -> UInt? { try integerIfPresent(UInt.self, index) }
    func decodeIfPresent(at index: Int) throws -> UInt8? { try integerIfPresent(UInt8.self, index) }
    func decodeIfPresent(at index: Int) throws -> UInt16? { try integerIfPresent(UInt16.self, index) }
    func decodeIfPresent(at index: Int) throws -> UInt32? { try integerIfPresent(UInt32.self, index) }
    func decodeIfPresent(at index: Int) throws -> UInt64? { try integerIfPresent(UInt64.self, index) }

    func decodeIfPresent<T: Decodable>(at index: Int) throws -> T? {
        if let overridden, overridden[index] { return try decoder.overriddenValue(T.self, key: keys[index]) }
        guard let present = presentColumn(index) else { return nil }
        return try decoder.decodeValue(T.self, column: present.column, key: { [keys] in Self.key(keys, index) })
    }
}
