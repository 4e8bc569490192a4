// libFuzzer targets, compiled into the library's own module by Fuzz/run so that they reach its
// internal parsers. FUZZ_TARGET chooses one: json, date, row, filter, request, answer (the last
// two with the sync's wire types and their checks, compiled in too: see Fuzz/run).
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

// MARK: Sync requests and answers

/// Values from the front of the bytes, leaning to the edges of each range (a hostile peer's).
private struct Bytes {
    var rest: Slice<UnsafeBufferPointer<UInt8>>

    /// The next byte; 1 once they run out (small values, not the largest cases).
    mutating func byte() -> UInt8 { rest.popFirst() ?? 1 }

    mutating func int64() -> Int64 {
        switch byte() % 8 {
        case 0: return 0
        case 1: return 1
        case 2: return -1
        case 3: return .min
        case 4: return .max
        case 5: return .max - 1
        default:
            var value: Int64 = 0
            for _ in 0..<8 { value = value << 8 | Int64(byte()) }
            return value
        }
    }

    mutating func optionalInt64() -> Int64? { byte() % 4 == 0 ? nil : int64() }

    /// A string whose length sits at or around one of the protocol's bounds, or is small.
    mutating func string() -> String {
        let lengths = [0, 1, 8, 199, 200, 201, 255, 256, 999, 1_000, 1_001]
        let kind = byte()
        let length = kind % 16 < 11 ? lengths[Int(kind % 16)] : Int(byte() % 40)
        // One byte, two, four: a bound counts characters, not bytes.
        let unit = ["x", "é", "🙂", "\u{0}"][Int(kind >> 6)]
        return String(repeating: unit, count: length)
    }

    mutating func optionalString() -> String? { byte() % 4 == 0 ? nil : string() }

    mutating func strings() -> [String]? {
        switch byte() % 32 {
        case 0 ..< 8: return nil
        case 8: return Array(repeating: "k", count: 10_000 + Int(byte() % 3))
        default: return (0..<Int(byte() % 4)).map { _ in string() }
        }
    }

    mutating func change() -> SyncChange {
        SyncChange(table: string(), id: string(), value: optionalString(), seq: optionalInt64(), version: optionalInt64(),
                   fields: strings(), keys: strings())
    }

    mutating func changes() -> [SyncChange] {
        let count = byte() % 32 == 0 ? SyncPush.maximumChanges + Int(byte() % 2) : Int(byte() % 6)
        let first = (0..<min(count, 6)).map { _ in change() }
        // Up to the bound and past it, with small changes (each with 10,000 keys would make an
        // input take seconds, which the server's 64 MiB body limit rules out anyway).
        return count <= 6 ? first : first + Array(repeating: SyncChange(table: "t", id: "i", value: nil, seq: 1, version: 0), count: count - first.count)
    }
}

/// A server's check of a request: it passes or throws `invalidArgument`, and what passes is within
/// every bound (so the server's arithmetic on it cannot trap).
private func checkRequest(_ push: SyncPush) {
    do {
        try push.validate()
    } catch let error as SyncError where error.code == .invalidArgument {
        return
    } catch {
        finding("a push's check threw \(error)")
    }
    guard !push.device.isEmpty, push.device.unicodeScalars.count <= 200, !push.token.isEmpty, push.token.unicodeScalars.count <= 200,
          push.changes.count <= SyncPush.maximumChanges else { finding("a push out of bounds passed: \(push.device.count), \(push.changes.count)") }
    for change in push.changes {
        guard let seq = change.seq, seq >= 1, (change.version ?? 0) >= 0, (change.value?.utf8.count ?? 0) <= 4 << 20,
              !change.table.isEmpty, change.table.unicodeScalars.count <= 255, change.id.unicodeScalars.count <= 1_000,
              (change.fields?.count ?? 0) <= 10_000, (change.keys?.count ?? 0) <= 10_000 else { finding("a change out of bounds passed") }
        // What a server computes from them.
        _ = seq - 1
        _ = (change.version ?? 0) + 0
    }
}

private func checkRequest(_ pull: SyncPull) {
    do {
        try pull.validate()
    } catch let error as SyncError where error.code == .invalidArgument {
        return
    } catch {
        finding("a pull's check threw \(error)")
    }
    guard pull.after >= 0, pull.limit >= 1, !pull.device.isEmpty, pull.device.unicodeScalars.count <= 200 else { finding("a pull out of bounds passed") }
    _ = min(pull.limit, 10_000)
}

/// The body of the wait route (`SyncHTTPEndpoint.WaitRequest`, which lives with the server), and
/// the server's check of it: the timeout it takes is one a `Duration` can hold.
private struct FuzzWaitRequest: Codable { var after: Int64; var timeout: Double? }

private func checkRequest(_ wait: FuzzWaitRequest) {
    let timeout = wait.timeout ?? 25
    guard timeout >= 1, timeout <= 60 else { return }
    _ = ContinuousClock.now + .seconds(timeout)
}

private func fuzzRequest(_ input: UnsafeBufferPointer<UInt8>) {
    if input.first == UInt8(ascii: "{") {
        let decoder = SyncJSON.decoder(), data = Data(input)
        if let push = try? decoder.decode(SyncPush.self, from: data) { checkRequest(push) }
        if let pull = try? decoder.decode(SyncPull.self, from: data) { checkRequest(pull) }
        if let wait = try? decoder.decode(FuzzWaitRequest.self, from: data) { checkRequest(wait) }
        return
    }
    var bytes = Bytes(rest: input[...])
    checkRequest(SyncPush(device: bytes.string(), token: bytes.string(), acknowledged: bytes.optionalString(), changes: bytes.changes()))
    checkRequest(SyncPull(device: bytes.string(), after: bytes.int64(), limit: Int(truncatingIfNeeded: bytes.int64()), epoch: bytes.optionalString()))
    checkRequest(FuzzWaitRequest(after: bytes.int64(), timeout: Double(bitPattern: UInt64(bitPattern: bytes.int64()))))
}

/// A device's check of a pull's answer: it passes or throws `invalidAnswer`; what passes, the
/// device's arithmetic on it (the version it records, the base versions of its next pushes)
/// cannot trap.
private func checkAnswer(_ answer: SyncPullResult, after: Int64, limit: Int) {
    do {
        try answer.validate(after: after, limit: limit)
    } catch let error as SyncError where error.code == .invalidAnswer {
        return
    } catch {
        finding("a pull answer's check threw \(error)")
    }
    guard answer.version >= 0, (answer.horizon ?? 0) >= 0, answer.changes.count <= max(limit, SyncPush.maximumChanges) else {
        finding("a pull answer out of bounds passed")
    }
    let pulled = max(answer.version, after)
    for change in answer.changes {
        let version = change.version ?? answer.version
        guard change.version.map({ $0 >= 1 }) ?? true else { finding("a change's version out of bounds passed") }
        _ = min(pulled, max(version, 1) - 1)
    }
}

/// A device's check of a push's answer: what passes names only rows the push carried.
private func checkAnswer(_ answer: SyncPushResult, for push: SyncPush) {
    do {
        try answer.validate(for: push)
    } catch let error as SyncError where error.code == .invalidAnswer {
        return
    } catch {
        finding("a push answer's check threw \(error)")
    }
    let pushed = Set(push.changes.map { "\($0.table)\u{0}\($0.id)" })
    let named = answer.conflicts.map { "\($0.table)\u{0}\($0.id)" } + answer.refused.map { "\($0.table)\u{0}\($0.id)" }
        + answer.droppedLinks.map { "\($0.table)\u{0}\($0.id)" }
    guard named.allSatisfy(pushed.contains) else { finding("a push answer naming a row the push did not carry passed") }
    guard answer.device.map({ !$0.isEmpty && $0.unicodeScalars.count <= 200 }) ?? true else { finding("a bad device id passed") }
}

private func fuzzAnswer(_ input: UnsafeBufferPointer<UInt8>) {
    var bytes = Bytes(rest: input[...])
    let after = bytes.int64(), limit = Int(bytes.byte()) * 100
    // The rows the push carried: some of those the answer names, and others.
    let rows = (0..<Int(bytes.byte() % 4)).map { _ in (table: bytes.string(), id: bytes.string()) }
    var push = SyncPush(device: "d", token: "t", acknowledged: nil, changes: rows.map {
        SyncChange(table: $0.table, id: $0.id, value: nil, seq: 1, version: 0)
    })
    if bytes.rest.first == UInt8(ascii: "{") {
        let decoder = SyncJSON.decoder(), data = Data(bytes.rest)
        if let answer = try? decoder.decode(SyncPullResult.self, from: data) { checkAnswer(answer, after: after, limit: limit) }
        if let answer = try? decoder.decode(SyncPushResult.self, from: data) {
            // The push carried half the rows the answer names, as the bytes say.
            for (index, conflict) in answer.conflicts.enumerated() where index % 2 == Int(after & 1) {
                push.changes.append(SyncChange(table: conflict.table, id: conflict.id, value: nil, seq: 1))
            }
            for refusal in answer.refused where after & 2 == 0 {
                push.changes.append(SyncChange(table: refusal.table, id: refusal.id, value: nil, seq: 1))
            }
            checkAnswer(answer, for: push)
        }
        return
    }
    let changes = bytes.changes()
    checkAnswer(SyncPullResult(changes: changes, version: bytes.int64(), more: bytes.byte() & 1 == 0, epoch: bytes.optionalString(),
                               horizon: bytes.optionalInt64()), after: after, limit: limit)
    func row() -> (table: String, id: String) {
        let pick = Int(bytes.byte())
        return pick % 3 == 0 || rows.isEmpty ? (bytes.string(), bytes.string()) : rows[pick % rows.count]
    }
    var answer = SyncPushResult(device: bytes.optionalString())
    for _ in 0..<Int(bytes.byte() % 4) {
        let (table, id) = row()
        answer.conflicts.append(SyncConflict(table: table, id: id, value: bytes.optionalString()))
    }
    for _ in 0..<Int(bytes.byte() % 4) {
        let (table, id) = row()
        answer.refused.append(SyncRefusal(table: table, id: id, reason: .init(bytes.string()), message: bytes.string()))
    }
    for _ in 0..<Int(bytes.byte() % 3) {
        let (table, id) = row()
        answer.droppedLinks.append(SyncDroppedLink(table: table, id: id, relatedTable: bytes.string(), relatedID: bytes.string()))
    }
    checkAnswer(answer, for: push)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    switch target {
    case "json": _ = try? JSONParser.parse(bytes)
    case "date": _ = DateText.parse(bytes)
    case "row": fuzzRow(bytes)
    case "filter": fuzzFilter(bytes)
    case "request": fuzzRequest(bytes)
    case "answer": fuzzAnswer(bytes)
    default: finding("unknown FUZZ_TARGET \(target)")
    }
    return 0
}
