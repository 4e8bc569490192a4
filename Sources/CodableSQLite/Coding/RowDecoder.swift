import Foundation

/// Column lookups for one statement, kept on the statement between calls so a decode call does
/// not rebuild them.
final class ColumnPlan {
    let columnNames: [String]
    let columnByKey: [String: Int32]
    /// Column names as they are, for keys the strategy cannot reach by converting names.
    let columnByName: [String: Int32]
    /// The statement compilation and key strategy the plan was made for.
    let compilation: Int32
    let strategy: Int
    /// Keys in the order the decoded type asks for them, with their columns (-1: none).
    /// Unchecked: a plan is used by its statement's connection only, one thread at a time.
    @exclusivity(unchecked) var lookups: [(key: String, column: Int32)] = []
    /// The columns of the last `RowDecodable` type decoded, and the last type found to decode
    /// through plain Codable (see ``RowDecoder/generatedColumns(for:)``).
    var generated: GeneratedColumns?
    var plainRowType: ObjectIdentifier?

    init(statement: Statement, options: DecodingOptions, strategy: Int) {
        compilation = statement.compilation
        self.strategy = strategy
        columnNames = statement.columnNames
        var columnByKey: [String: Int32] = [:]
        var columnByName: [String: Int32] = [:]
        for (column, name) in columnNames.enumerated() {
            let key = options.convertsKeys ? options.keyName(for: name, at: .root) : name
            if columnByKey[key] == nil { columnByKey[key] = Int32(column) }  // leftmost wins
            if columnByName[name] == nil { columnByName[name] = Int32(column) }
        }
        self.columnByKey = columnByKey
        self.columnByName = options.convertsKeys ? columnByName : columnByKey
    }

    /// The plan cached on `statement` for these options, made when missing or stale.
    static func plan(for statement: Statement, options: DecodingOptions) -> ColumnPlan {
        let strategy = options.keyStrategy.planIdentifier
        if let strategy, let plan = statement.plans.columns, plan.strategy == strategy, plan.compilation == statement.compilation {
            return plan
        }
        let plan = ColumnPlan(statement: statement, options: options, strategy: strategy ?? -1)
        if strategy != nil { statement.plans.columns = plan }
        return plan
    }
}

/// A column holding a value (not NULL), with its storage class.
struct PresentColumn {
    let column: Int32
    let storageClass: StorageClass
}

/// The `Swift.Decoder` that reads a row straight from a prepared statement.
///
/// Coding keys are resolved to column indexes once per statement (see ``ColumnPlan``); lookups are
/// remembered in the order the type decodes its keys, which is the same for every row, so a
/// row costs about one string comparison per key.
final class RowDecoder: Swift.Decoder {
    let statement: Statement
    let options: DecodingOptions
    let plan: ColumnPlan
    /// Unchecked: a decoder is used by one thread, and the check cost one runtime call per key.
    @exclusivity(unchecked) private var lookupCursor = 0
    /// The row's index when decoding an array, first in every coding path.
    var rowIndex: Int?
    let columnCount: Int32

    init(statement: Statement, options: DecodingOptions) {
        self.statement = statement
        self.options = options
        plan = ColumnPlan.plan(for: statement, options: options)
        columnCount = Int32(plan.columnNames.count)
    }

    /// What error messages and JSON decoding need; made on first use.
    private(set) lazy var context = DecodingContext(options: options, sql: statement.sql, columnNames: plan.columnNames)

    var codingPath: [any CodingKey] { rowIndex.map { [AnyCodingKey(intValue: $0)] } ?? [] }
    var userInfo: [CodingUserInfoKey: Any] { options.codingUserInfo }

    var basePath: CodingPath {
        rowIndex.map { CodingPath.root.appending(index: $0) } ?? .root
    }

    /// The coding keys the columns stand for, for `allKeys`.
    var columnKeys: [String] { Array(plan.columnByKey.keys) }

    /// How many rows the last call decoded: the next call's array starts with that capacity (a
    /// statement tends to return as many rows again), saving the copies of growing it.
    var lastRowCount = 0

    /// Decodes the current row: by the type's generated code when it has some, else through Codable.
    func decodeRow<T: Decodable>(_ type: T.Type) throws -> T {
        lookupCursor = 0
        if StoredForm.isSpecial(T.self) {
            return try decodeValue(T.self, column: try singleColumn(for: T.self), key: { nil })
        }
        if let generated = generatedColumns(for: T.self) {
            return try decodeGeneratedRow(generated, as: T.self)
        }
        return try T(from: self)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        lookupCursor = 0
        if let reusable, reusable.keyType == ObjectIdentifier(Key.self) {
            // Same key type, so the holder is a `ReusableContainer<Key>`: no checked cast needed.
            return unsafeDowncast(reusable, to: ReusableContainer<Key>.self).container
        }
        return newContainer(keyedBy: Key.self)
    }

    /// Apart from the fast path above, so that it asks the runtime for no type metadata.
    @inline(never)
    private func newContainer<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        let container = KeyedDecodingContainer(RowKeyedDecodingContainer<Key>(decoder: self))
        if reusesContainers { reusable = ReusableContainer(container) }
        return container
    }

    /// Set while decoding the rows of one statement, and for as long as the statement keeps this
    /// decoder (``forRows(of:options:)``): the keyed container made for the first row serves every
    /// row (it holds nothing but this decoder), which saves the runtime type lookups and the
    /// allocation that making one costs. ``endReuse()`` breaks the reference cycle.
    var reusesContainers = false
    private var reusable: ReusableContainerBase?

    func endReuse() {
        reusesContainers = false
        reusable = nil
    }

    /// Whether the statement keeps this decoder for its next call (``StatementPlans/decoder``).
    private var isKept = false

    /// A decoder for the rows of `statement`, reusing its keyed container from row to row. With
    /// default options (the model layer's), the statement keeps the decoder and its container for
    /// the next call: a single-row lookup then asks the runtime for no type metadata and allocates
    /// no decoder. Call ``endCall()`` when the rows are done.
    static func forRows(of statement: Statement, options: DecodingOptions) -> RowDecoder {
        guard options.isDefault else {
            let decoder = RowDecoder(statement: statement, options: options)
            decoder.reusesContainers = true
            return decoder
        }
        let plans = statement.plans
        // A recompiled statement (after a schema change) may have other columns: a new plan.
        if let kept = plans.decoder, kept.plan.compilation == statement.compilation {
            kept.rowIndex = nil
            return kept
        }
        plans.decoder?.endReuse()
        let decoder = RowDecoder(statement: statement, options: options)
        decoder.reusesContainers = true
        decoder.isKept = true
        plans.decoder = decoder
        return decoder
    }

    /// Ends a call that began with ``forRows(of:options:)``: a decoder the statement does not
    /// keep lets go of its container (which refers back to it).
    func endCall() {
        if !isKept { endReuse() }
    }

    /// Several columns are read in order; a single column holds a JSON array.
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        if columnCount == 1 {
            return try ColumnDecoder(row: self, column: 0, key: nil).unkeyedContainer()
        }
        return RowUnkeyedDecodingContainer(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ColumnDecoder(row: self, column: try singleColumn(for: Any.self), key: nil)
    }

    private func singleColumn(for type: Any.Type) throws -> Int32 {
        guard columnCount == 1 else {
            throw DecodingError.typeMismatch(type, DecodingError.Context(
                codingPath: codingPath,
                debugDescription: "Expected to decode \(type) from a single column but the row has \(columnCount) columns "
                    + "(\(plan.columnNames.joined(separator: ", "))); select one column, or decode a type with "
                    + "a property per column. SQL: \(statement.sql)"))
        }
        return 0
    }

    /// The column for `key`, or `nil` when the result has none.
    @inline(__always)
    func column(for key: some CodingKey) -> Int32? {
        let name = key.stringValue
        let lookups = plan.lookups
        if lookupCursor < lookups.count, lookups[lookupCursor].key == name {
            let column = lookups[lookupCursor].column
            lookupCursor += 1
            return column < 0 ? nil : column
        }
        return slowColumn(for: name)
    }

    /// A key met out of the usual order: look it up among the known keys, else in the column map.
    private func slowColumn(for name: String) -> Int32? {
        if let index = plan.lookups.firstIndex(where: { $0.key == name }) {
            lookupCursor = index + 1
            let column = plan.lookups[index].column
            return column < 0 ? nil : column
        }
        let column = resolveColumn(named: name)
        plan.lookups.append((name, column ?? -1))
        lookupCursor = plan.lookups.count
        return column
    }

    /// `column` with its storage class when it holds a value; `nil` for a missing column or NULL.
    @inline(__always)
    func present(_ column: Int32?) -> PresentColumn? {
        guard let column else { return nil }
        let storageClass = statement.type(at: column)
        return storageClass == .null ? nil : PresentColumn(column: column, storageClass: storageClass)
    }

    /// The column the key strategy gives the key `name`, or `nil` when the result has none.
    func resolveColumn(named name: String) -> Int32? {
        if let column = plan.columnByKey[name] { return column }
        if case .convertFromSnakeCase = options.keyStrategy {
            // `reminderID` is written `reminder_id`, which converts back to `reminderId`: also try
            // the key's own snake case, so keys with acronyms round-trip.
            return plan.columnByName[KeyConversion.toSnakeCase(name)]
        }
        return nil
    }

    func keyNotFound(_ key: some CodingKey) -> DecodingError {
        .keyNotFound(key, DecodingError.Context(
            codingPath: codingPath,
            debugDescription: "No value associated with key \"\(key.stringValue)\": the result has no column "
                + "\"\(key.stringValue)\" (columns: \(plan.columnNames.joined(separator: ", ")); SQL: \(statement.sql))."))
    }

    // MARK: Reading columns
    //
    // `key` gives the coding key of the value being read, only when an error needs it: keyed
    // containers pass their key, unkeyed ones the index, single values nothing. (A closure rather
    // than a generic optional key: the containers run unspecialized for the caller's key type, and
    // asking the runtime for `Optional<Key>` metadata on every value is measurably slow.)

    func path(_ key: () -> AnyCodingKey?) -> [any CodingKey] {
        basePath.keys(appending: key())
    }

    func unexpected(_ type: Any.Type, column: Int32, key: () -> AnyCodingKey?) -> DecodingError {
        let storageClass = statement.type(at: column)
        if storageClass == .null {
            return DecodingFailure.valueNotFound(type, found: "NULL", path: path(key), location: context.location(column: column))
        }
        return DecodingFailure.typeMismatch(
            type, found: storageClass.description, path: path(key),
            location: context.location(column: column))
    }

    private func doesNotFit(_ number: String, _ type: Any.Type, column: Int32, key: () -> AnyCodingKey?) -> DecodingError {
        DecodingFailure.numberDoesNotFit(number, type, path: path(key), location: context.location(column: column))
    }

    func corrupted(_ description: String, column: Int32, key: () -> AnyCodingKey?) -> DecodingError {
        DecodingFailure.dataCorrupted(description, path: path(key), location: context.location(column: column))
    }

    /// INTEGER or REAL: zero is false, anything else true.
    @inline(__always)
    func decodeBool(column: Int32, key: () -> AnyCodingKey?) throws -> Bool {
        try decodeBool(column: column, storageClass: statement.type(at: column), key: key)
    }

    // Each reader takes the column's storage class when the caller has read it already (an
    // optional's NULL check): one `sqlite3_column_type` per value.

    func decodeBool(column: Int32, storageClass: StorageClass, key: () -> AnyCodingKey?) throws -> Bool {
        switch storageClass {
        case .integer: return statement.int64(at: column) != 0
        case .real: return statement.double(at: column) != 0
        default: throw unexpected(Bool.self, column: column, key: key)
        }
    }

    /// INTEGER, or REAL holding a whole number, that fits the type exactly.
    @inline(__always)
    func decodeInteger<I: FixedWidthInteger>(_ type: I.Type, column: Int32, key: () -> AnyCodingKey?) throws -> I {
        try decodeInteger(I.self, column: column, storageClass: statement.type(at: column), key: key)
    }

    @inline(__always)
    func decodeInteger<I: FixedWidthInteger>(_ type: I.Type, column: Int32, storageClass: StorageClass, key: () -> AnyCodingKey?) throws -> I {
        switch storageClass {
        case .integer:
            let value = statement.int64(at: column)
            if let integer = I(exactly: value) { return integer }
            throw doesNotFit(String(value), I.self, column: column, key: key)
        case .real:
            let value = statement.double(at: column)
            if let integer = I(exactly: value) { return integer }
            throw doesNotFit(String(value), I.self, column: column, key: key)
        default:
            throw unexpected(I.self, column: column, key: key)
        }
    }

    /// REAL or INTEGER; a finite REAL too large for `Float` is an error.
    @inline(__always)
    func decodeFloat<F: BinaryFloatingPoint>(_ type: F.Type, column: Int32, key: () -> AnyCodingKey?) throws -> F {
        try decodeFloat(F.self, column: column, storageClass: statement.type(at: column), key: key)
    }

    @inline(__always)
    func decodeFloat<F: BinaryFloatingPoint>(_ type: F.Type, column: Int32, storageClass: StorageClass, key: () -> AnyCodingKey?) throws -> F {
        switch storageClass {
        case .real:
            let value = statement.double(at: column)
            let converted = F(value)
            if converted.isInfinite && value.isFinite {
                throw doesNotFit(String(value), F.self, column: column, key: key)
            }
            return converted
        case .integer:
            return F(statement.int64(at: column))
        default:
            throw unexpected(F.self, column: column, key: key)
        }
    }

    @inline(__always)
    func decodeString(column: Int32, key: () -> AnyCodingKey?) throws -> String {
        try decodeString(column: column, storageClass: statement.type(at: column), key: key)
    }

    @inline(__always)
    func decodeString(column: Int32, storageClass: StorageClass, key: () -> AnyCodingKey?) throws -> String {
        guard storageClass == .text else { throw unexpected(String.self, column: column, key: key) }
        return statement.text(at: column)
    }

    /// Any `Decodable`: the types the storage contract stores by its own rule (``StoredForm``),
    /// else through a ``ColumnDecoder`` (single values read the column, containers read its JSON).
    func decodeValue<T: Decodable>(_ type: T.Type, column: Int32, key: () -> AnyCodingKey?) throws -> T {
        if StoredForm.isSpecial(T.self) {
            return try StoredForm.decode(T.self, from: ColumnSource(row: self, column: column), key: key)
        } else if T.self == stringArrayType, statement.type(at: column) == .text,
                  let strings = statement.withUTF8(at: column, JSONParser.parseStringArray) {
            // A fast path for the most common nested value; the same result as the general path.
            return try identityCast(strings, to: T.self)
        }
        return try T(from: ColumnDecoder(row: self, column: column, key: key()))
    }
}

/// A keyed container kept for the next row; the base class lets the decoder hold any key type.
private class ReusableContainerBase {
    let keyType: ObjectIdentifier
    init(keyType: ObjectIdentifier) { self.keyType = keyType }
}

private final class ReusableContainer<Key: CodingKey>: ReusableContainerBase {
    let container: KeyedDecodingContainer<Key>
    init(_ container: KeyedDecodingContainer<Key>) {
        self.container = container
        super.init(keyType: ObjectIdentifier(Key.self))
    }
}

/// One column of the current row, as ``StoredForm`` reads it.
private struct ColumnSource: StoredSource {
    let row: RowDecoder
    let column: Int32

    var storageClass: StorageClass? { row.statement.type(at: column) }
    var isJSON: Bool { false }
    var numberLiteral: String? { nil }
    var dateStrategy: CodingStrategy.DateDecoding { row.options.dateStrategy }
    func int64() -> Int64 { row.statement.int64(at: column) }
    func double() -> Double { row.statement.double(at: column) }
    func text() -> String { row.statement.text(at: column) }
    func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R { try row.statement.withUTF8(at: column, body) }
    func blob() -> Data { row.statement.data(at: column) }
    func decoder(key: () -> AnyCodingKey?) -> any Swift.Decoder { ColumnDecoder(row: row, column: column, key: key()) }
    func unexpected(key: () -> AnyCodingKey?, _ type: Any.Type) -> DecodingError { row.unexpected(type, column: column, key: key) }
    func corrupted(key: () -> AnyCodingKey?, _ description: String) -> DecodingError { row.corrupted(description, column: column, key: key) }
    func invalidDate(key: () -> AnyCodingKey?, _ text: String) -> DecodingError {
        DecodingFailure.invalidDate(text, path: row.path(key), location: row.context.location(column: column))
    }
}
