// libFuzzer targets, compiled into the library's own module by Fuzz/run so that they reach its
// internal parsers. FUZZ_TARGET chooses one: json, date, row, filter.
import Foundation

private let target = ProcessInfo.processInfo.environment["FUZZ_TARGET"] ?? "json"

/// Something the fuzzer found: a trap here is a finding (never reachable from the library).
private func finding(_ message: String) -> Never {
    FileHandle.standardError.write(Data("FUZZ FINDING: \(message)\n".utf8))
    abort()
}

// MARK: Rows

enum FuzzColor: String, Codable { case red, green }

struct FuzzNested: Codable { var a: Int?; var b: [String]?; var c: [String: Double]? }

/// A type with every kind of property, decoded from columns of any storage class and any bytes.
struct FuzzRow: Codable {
    var int: Int?
    var small: Int8?
    var double: Double?
    var string: String?
    var date: Date?
    var uuid: UUID?
    var url: URL?
    var data: Data?
    var decimal: Decimal?
    var color: FuzzColor?
    var nested: FuzzNested?
    var list: [Int]?
    var flag: Bool?
}

private let rowDatabase: SQLite.Database? = try? SQLite.Database(path: ":memory:")

/// One column value from the front of the bytes: a storage class, then its contents.
private func value(_ bytes: inout Slice<UnsafeBufferPointer<UInt8>>) -> SQLite.Value {
    guard let kind = bytes.popFirst() else { return .null }
    let length = Int(bytes.popFirst() ?? 0) % 64
    let chunk = Array(bytes.prefix(length))
    bytes = bytes.dropFirst(length)
    switch kind % 5 {
    case 0:
        var integer: Int64 = 0
        for byte in chunk.prefix(8) { integer = integer << 8 | Int64(byte) }
        return .integer(integer)
    case 1:
        var bits: UInt64 = 0
        for byte in chunk.prefix(8) { bits = bits << 8 | UInt64(byte) }
        let double = Double(bitPattern: bits)
        return double.isNaN ? .null : .double(double)
    case 2: return .text(String(decoding: chunk, as: UTF8.self))
    case 3: return .data(Data(chunk))
    default: return .null
    }
}

private func fuzzRow(_ input: UnsafeBufferPointer<UInt8>) {
    guard let db = rowDatabase else { finding("no database") }
    var bytes = input[...]
    let columns = ["int", "small", "double", "string", "date", "uuid", "url", "data", "decimal", "color", "nested", "list", "flag"]
    let values = columns.map { _ in value(&bytes) }
    let sql = "SELECT " + columns.enumerated().map { "?\($0.offset + 1) AS \($0.element)" }.joined(separator: ", ")
    let decoder = SQLite.Decoder(db)
    do {
        _ = try decoder.decode(FuzzRow.self, using: sql, arguments: values)
    } catch is DecodingError {
    } catch let error as SQLite.Error {
        finding("SQLite error on a plain SELECT: \(error)")
    } catch {
        finding("unexpected error \(error)")
    }
}

// MARK: Filters and keys

struct FuzzModel: Codable, Model, Equatable { var id: Int64?; var name: String }

private let modelDatabase: SQLite.Database? = try? SQLite.Database(path: ":memory:")

private func fuzzFilter(_ input: UnsafeBufferPointer<UInt8>) {
    guard let db = modelDatabase else { finding("no database") }
    let text = String(decoding: input, as: UTF8.self)
    do {
        let saved = try db.save(FuzzModel(id: nil, name: text))
        let found = try db.get(with: Filter(\FuzzModel.name, is: .equal(to: text)))
        guard found.contains(saved) else { finding("a saved value was not found by its own name") }
        _ = try db.count(with: Filter(\FuzzModel.name, is: .hasPrefix(text)).or(\FuzzModel.name, is: .like(text)))
        try db.store(text, forKey: text)
        guard try db.value(String.self, forKey: text) == text else { finding("a stored value did not come back") }
        _ = try db.delete(with: Filter(\FuzzModel.name, is: .contains(text)))
        guard try db.tables().contains("FuzzModel") else { finding("the model table disappeared") }
    } catch {
        finding("a hostile string made an operation fail: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    switch target {
    case "json": _ = try? JSONParser.parse(bytes)
    case "date": _ = DateText.parse(bytes)
    case "row": fuzzRow(bytes)
    case "filter": fuzzFilter(bytes)
    default: finding("unknown FUZZ_TARGET \(target)")
    }
    return 0
}
