/// A `Decodable` type whose rows are read by code generated for it (`@RowCodable`): each coded
/// property by its position, with no keyed container and no lookup by name per row.
///
/// The coders and the model API of both engines use it when a type has it; it changes no
/// result. The storage contract, the values read, the errors and their coding paths are plain
/// `Codable`'s, because the generated code reads the same properties under the same coding keys.
/// Write `@RowCodable` (the `Macros` package trait) rather than conforming by hand:
///
/// ```swift
/// @RowCodable
/// struct Order: Codable {
///     var id: Int64
///     var customer: String?
///     var placedAt: Date
/// }
/// let orders = try decoder.decode([Order].self, using: "SELECT * FROM orders")   // generated
/// ```
public protocol RowDecodable: Decodable {
    /// The coding keys of the coded properties, in the order ``init(row:)`` reads them.
    static var rowCodingKeys: [any CodingKey] { get }
    /// Reads every coded property from `row`, property `n` from ``rowCodingKeys``[n].
    init<Row: RowReader>(row: inout Row) throws
    /// Reads the current row and every one after it (``RowReader/nextRow()``), in order, into an
    /// array that starts with `capacity`. `@RowCodable` writes it for the type, so that the loop
    /// runs specialized for it; the default does the same through ``init(row:)``.
    static func decodeRows<Row: RowReader>(_ row: inout Row, capacity: Int) throws -> [Self]
}

extension RowDecodable {
    @inlinable
    public static func decodeRows<Row: RowReader>(_ row: inout Row, capacity: Int) throws -> [Self] {
        var rows: [Self] = []
        rows.reserveCapacity(capacity)
        repeat {
            rows.append(try Self(row: &row))
        } while try row.nextRow()
        return rows
    }
}

/// An `Encodable` type whose rows are written by code generated for it (`@RowCodable`).
///
/// ```swift
/// @RowCodable
/// struct Order: Codable { var id: Int64; var customer: String? }
/// try encoder.encode(order, using: "INSERT INTO orders VALUES (:id, :customer)")   // generated
/// ```
public protocol RowEncodable: Encodable {
    /// The coding keys of the coded properties, in the order ``encode(row:)`` writes them.
    static var rowCodingKeys: [any CodingKey] { get }
    /// Writes every coded property to `row`, property `n` under ``rowCodingKeys``[n]; a `nil`
    /// optional is skipped, as `encodeIfPresent` skips it.
    func encode<Row: RowWriter>(row: inout Row) throws
}

/// Both ``RowDecodable`` and ``RowEncodable``: what `@RowCodable` generates.
public typealias RowCodable = RowDecodable & RowEncodable

/// One row being read by generated code: each engine's coders provide it.
///
/// The property at position `index` of ``RowDecodable/rowCodingKeys`` is read with the rules of
/// the `KeyedDecodingContainer` call of the same name: `decode(at:)` for a value (a missing
/// column is `keyNotFound`), `decodeIfPresent(at:)` for an optional (a missing column or NULL is
/// `nil`). The overload is picked by the property's type:
///
/// ```swift
/// self.id = try row.decode(at: 0)                // Int64
/// self.customer = try row.decodeIfPresent(at: 1) // String?
/// ```
public protocol RowReader {
    /// Moves to the next row of the result: `false` when there is none.
    mutating func nextRow() throws -> Bool
    func decode(at index: Int) throws -> Bool
    func decode(at index: Int) throws -> String
    func decode(at index: Int) throws -> Double
    func decode(at index: Int) throws -> Float
    func decode(at index: Int) throws -> Int
    func decode(at index: Int) throws -> Int8
    func decode(at index: Int) throws -> Int16
    func decode(at index: Int) throws -> Int32
    func decode(at index: Int) throws -> Int64
    func decode(at index: Int) throws -> UInt
    func decode(at index: Int) throws -> UInt8
    func decode(at index: Int) throws -> UInt16
    func decode(at index: Int) throws -> UInt32
    func decode(at index: Int) throws -> UInt64
    func decode<T: Decodable>(at index: Int) throws -> T
    func decodeIfPresent(at index: Int) throws -> Bool?
    func decodeIfPresent(at index: Int) throws -> String?
    func decodeIfPresent(at index: Int) throws -> Double?
    func decodeIfPresent(at index: Int) throws -> Float?
    func decodeIfPresent(at index: Int) throws -> Int?
    func decodeIfPresent(at index: Int) throws -> Int8?
    func decodeIfPresent(at index: Int) throws -> Int16?
    func decodeIfPresent(at index: Int) throws -> Int32?
    func decodeIfPresent(at index: Int) throws -> Int64?
    func decodeIfPresent(at index: Int) throws -> UInt?
    func decodeIfPresent(at index: Int) throws -> UInt8?
    func decodeIfPresent(at index: Int) throws -> UInt16?
    func decodeIfPresent(at index: Int) throws -> UInt32?
    func decodeIfPresent(at index: Int) throws -> UInt64?
    func decodeIfPresent<T: Decodable>(at index: Int) throws -> T?
}

/// One row being written by generated code: each engine's coders provide it.
///
/// The property at position `index` of ``RowEncodable/rowCodingKeys`` is written with the rules
/// of the `KeyedEncodingContainer` call of the same name; an optional that is `nil` is not
/// written, as `encodeIfPresent` writes nothing for it:
///
/// ```swift
/// try row.encode(id, at: 0)
/// if let customer { try row.encode(customer, at: 1) }
/// ```
public protocol RowWriter {
    mutating func encode(_ value: Bool, at index: Int) throws
    mutating func encode(_ value: String, at index: Int) throws
    mutating func encode(_ value: Double, at index: Int) throws
    mutating func encode(_ value: Float, at index: Int) throws
    mutating func encode(_ value: Int, at index: Int) throws
    mutating func encode(_ value: Int8, at index: Int) throws
    mutating func encode(_ value: Int16, at index: Int) throws
    mutating func encode(_ value: Int32, at index: Int) throws
    mutating func encode(_ value: Int64, at index: Int) throws
    mutating func encode(_ value: UInt, at index: Int) throws
    mutating func encode(_ value: UInt8, at index: Int) throws
    mutating func encode(_ value: UInt16, at index: Int) throws
    mutating func encode(_ value: UInt32, at index: Int) throws
    mutating func encode(_ value: UInt64, at index: Int) throws
    mutating func encode<T: Encodable>(_ value: T, at index: Int) throws
}

#if Macros
/// Generates row decoding and encoding for a `Codable` struct (``RowDecodable``,
/// ``RowEncodable``): the coders and the model API of both engines then read and write its rows
/// by position, with plain Codable's results and errors. Needs the `Macros` package trait.
///
/// ```swift
/// @RowCodable
/// struct Order: Codable {
///     var id: Int64
///     var customer: String?
/// }
/// ```
///
/// State `Codable` on the struct itself, even when a protocol it adopts (``Model``) implies it:
/// the Swift 6.3 compiler can otherwise fail to synthesize `Decodable` for a type whose
/// properties are other generated types, when another file of the module uses it ("does not
/// conform to protocol 'Decodable'", depending on how the module's files are batched).
@attached(
    extension, conformances: RowDecodable, RowEncodable,
    names: named(rowCodingKeys), named(init(row:)), named(decodeRows(_:capacity:)), named(encode(row:)))
public macro RowCodable() = #externalMacro(module: "CodableSQLiteMacros", type: "RowCodableMacro")

/// Generates row decoding only (``RowDecodable``), for a `Decodable` struct.
///
/// ```swift
/// @RowDecodable
/// struct Total: Decodable { var customer: String; var amount: Double }
/// ```
@attached(extension, conformances: RowDecodable, names: named(rowCodingKeys), named(init(row:)), named(decodeRows(_:capacity:)))
public macro RowDecodable() = #externalMacro(module: "CodableSQLiteMacros", type: "RowCodableMacro")

/// Generates row encoding only (``RowEncodable``), for an `Encodable` struct.
///
/// ```swift
/// @RowEncodable
/// struct NewOrder: Encodable { var customer: String; var amount: Double }
/// ```
@attached(extension, conformances: RowEncodable, names: named(rowCodingKeys), named(encode(row:)))
public macro RowEncodable() = #externalMacro(module: "CodableSQLiteMacros", type: "RowCodableMacro")
#endif
